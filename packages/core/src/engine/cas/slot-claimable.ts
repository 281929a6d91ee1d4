import type { SlotHolder, VersionedRecord } from '../../contract/lock-record.js';
import type { CasParts } from './cas-parts.js';
import { holdersOf } from './slot-records.js';

// Which holders of a semaphore still hold it: by each holder's stored expiry on trusted clocks,
// or, on untrusted ones (and for a holder on untrusted clocks, which stores none), by how long this client has seen that holder's entry unchanged (its
// own writeId), since the record's version moves with every other holder's writes.

/**
 * When this client first saw each semaphore holder entry, by the entry's own write id. Each entry
 * keeps its first sighting however records are read later: an older version read after a newer
 * one (another lease's cached record, a late answer) must not make an entry that had run out
 * look live again, or a claim judged on one reading would keep it on the next and store more
 * holders than the limit. Bounded: the sightings looked at least recently go first.
 */
export class SlotSightings {
  private readonly seen = new Map<string, number>();

  constructor(private readonly capacity = 10_000) {}

  /** Monotonic time this client first saw `holder` of `key` as written by its `writeId`. */
  firstSeen(key: string, holder: SlotHolder, now: number): number {
    const id = `${key}\n${holder.lockId}\n${holder.writeId}`;
    const firstSeenAt = this.seen.get(id);
    // Moved to the back on every look: an entry still being watched is not the one forgotten.
    this.seen.delete(id);
    this.seen.set(id, firstSeenAt ?? now);
    if (firstSeenAt !== undefined) return firstSeenAt;
    if (this.seen.size > this.capacity) {
      const oldest = this.seen.keys().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
    return now;
  }
}

export interface SlotParts extends CasParts {
  readonly sightings: SlotSightings;
}

/** Milliseconds until `holder` may be dropped as expired (0: now), or undefined for never (fail-closed). */
export function msUntilSlotEnds(parts: SlotParts, key: string, holder: SlotHolder): number | undefined {
  if (holder.leaseMs === null) return undefined;
  const { clock } = parts;
  // A holder on untrusted clocks stores no expiry: judged by its entry unchanged, in every mode.
  if (clock.mode === 'trusted' && holder.expiresAt !== null) {
    // Strictly after the tolerance, as for a lock's takeover.
    return Math.max(0, holder.expiresAt + clock.toleranceMs + 1 - clock.time.now());
  }
  const now = clock.time.monotonic();
  const firstSeenAt = parts.sightings.firstSeen(key, holder, now);
  return Math.max(0, firstSeenAt + holder.leaseMs + clock.toleranceMs - now);
}

/** The holders of `current` that still hold the key, by this client's clock mode. */
export function liveSlots(parts: SlotParts, key: string, current: VersionedRecord | null): SlotHolder[] {
  if (!current) return [];
  return holdersOf(current.record).filter((holder) => msUntilSlotEnds(parts, key, holder) !== 0);
}

/** Milliseconds until a slot of `current` may free up by expiry, if this client can tell. */
export function msUntilSlotFree(
  parts: SlotParts,
  key: string,
  current: VersionedRecord | null,
): number | undefined {
  if (!current) return 0;
  let soonest: number | undefined;
  for (const holder of holdersOf(current.record)) {
    const ms = msUntilSlotEnds(parts, key, holder);
    if (ms !== undefined && (soonest === undefined || ms < soonest)) soonest = ms;
  }
  return soonest;
}
