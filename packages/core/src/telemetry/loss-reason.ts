import { LockLostError } from '../shared/errors.js';

/**
 * Why a held lock was lost, for `latch.lost.reason`: `expired` (the lease ran out before a
 * renewal could land: store unreachable or the event loop blocked), `failed` (a renewal met an
 * error that ends the lease, such as a corrupted record), or `taken` (someone else freed or
 * took the lock: forceRelease, a release by handle, a takeover after expiry). Read from the
 * LockLostError the lock reported.
 */
export type LossReason = 'expired' | 'failed' | 'taken';

export function lossReason(error: unknown): LossReason {
  if (!(error instanceof LockLostError)) return 'failed';
  if (error.message.includes('ran out before a renewal')) return 'expired';
  if (error.message.includes('renewal failed:')) return 'failed';
  return 'taken';
}
