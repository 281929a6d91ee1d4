import type { LockRecord, SlotHolder } from '../src/contract/lock-record.js';
import { holdersOf, limitOf } from '../src/engine/cas/slot-records.js';
import type { AppliedWrite } from './backend.js';

/**
 * When each holder's entry of a stored record was last written: a lock's holder changes with
 * every write of the record, but a semaphore holder's entry only with that holder's own writes
 * (its writeId), while the others' renewals rewrite the record around it. Its lease is timed
 * from its own last write, which is what the liveness checks need.
 */
export class HolderWrites {
  private readonly byKey = new Map<string, Map<string, { writeId: string; at: number }>>();
  /** Virtual time the set of holders of each key last changed (a holder came or went). */
  private readonly changedAt = new Map<string, number>();

  /** The store applied `write` at virtual time `at`. */
  record(write: AppliedWrite, at: number): void {
    const holders = write.after ? holdersOf(write.after) : [];
    let known = this.byKey.get(write.key);
    if (!known) {
      known = new Map();
      this.byKey.set(write.key, known);
    }
    let changed = known.size !== holders.length;
    for (const holder of holders) {
      const seen = known.get(holder.lockId);
      if (seen?.writeId === holder.writeId) continue;
      if (!seen) changed = true;
      known.set(holder.lockId, { writeId: holder.writeId, at });
    }
    if (known.size !== holders.length) {
      // Some left (and as many may have come): keep only those the record names now.
      for (const lockId of known.keys()) {
        if (!holders.some((holder) => holder.lockId === lockId)) known.delete(lockId);
      }
      changed = true;
    }
    if (changed || !this.changedAt.has(write.key)) this.changedAt.set(write.key, at);
  }

  /** Virtual time `holder` of `key` was last written (0 if never seen). */
  writtenAt(key: string, holder: SlotHolder): number {
    return this.byKey.get(key)?.get(holder.lockId)?.at ?? 0;
  }

  /**
   * Since when `record` of `key` has (or will have) room for one more holder, given when each
   * holder's lease is surely over (`endsAt`, from that holder's own last write): since its
   * holders last changed when fewer than its limit hold it, else once enough of them ended.
   */
  roomSince(
    key: string,
    record: LockRecord,
    endsAt: (holder: SlotHolder, writtenAt: number) => number,
  ): number {
    const changedAt = this.changedAt.get(key) ?? 0;
    const holders = holdersOf(record);
    const limit = limitOf(record);
    if (holders.length < limit) return changedAt;
    const ends = holders.map((holder) => endsAt(holder, this.writtenAt(key, holder))).sort((a, b) => a - b);
    return Math.max(changedAt, ends[holders.length - limit]!);
  }
}
