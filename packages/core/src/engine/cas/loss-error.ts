import type { VersionedRecord } from '../../contract/lock-record.js';
import { holderName, LockLostError } from '../../shared/errors.js';
import { holdersOf } from './slot-records.js';

/** What a writer's caller hears when its lease is lost, and why, as the writer can tell. */
export function lossError(
  key: string,
  lockId: string,
  loss:
    | { readonly why: 'expired'; readonly suspended: boolean }
    /** `record`: the record as last seen (null: deleted; undefined: not known). */
    | { readonly why: 'taken'; readonly record: VersionedRecord | null | undefined },
): LockLostError {
  if (loss.why === 'expired') {
    const why = loss.suspended
      ? 'the machine may have been suspended: its wall clock moved further than its monotonic clock since the lease was last written, or passed the expiry the lease stored'
      : 'the lease ran out before a renewal could land (store unreachable, or the event loop was blocked)';
    return new LockLostError(key, why, { reason: 'expired' });
  }
  return new LockLostError(key, takenWhy(lockId, loss.record), { reason: 'taken' });
}

/** Who the record moved on to, naming the holders it now shows (the operator's first question). */
function takenWhy(lockId: string, current: VersionedRecord | null | undefined): string {
  if (current === null) return 'its record was deleted';
  const others = current ? holdersOf(current.record).filter((entry) => entry.lockId !== lockId) : [];
  if (others.length === 0)
    return 'the record moved on without it (forceRelease, a release by handle, or a takeover and release)';
  return `the record moved on without it: it is now held by ${others.map(holderName).join(', ')}`;
}
