import type { LeaseHolder, LockRecord, SlotHolder, VersionedRecord } from '../../contract/lock-record.js';
import { LockLimitMismatchError } from '../../shared/errors.js';

// A semaphore is one record per key like a lock, with every holder in `holders`. These are the
// pure reads and rebuilds of such a record; the writes are in slot-claim.ts and slot-write.ts.

/** The most holders a semaphore may have: every holder renews the one record, so writes grow with it. */
export const MAX_LIMIT = 100;

/** The lock id of a semaphore record's `holder`: it stands for the holders, and is nobody's acquisition. */
export const SEMAPHORE_HOLDER_ID = 'latch:semaphore';

/**
 * True for a record a semaphore wrote: `holders`, with `holder` standing for them (or null when
 * there are none). A plain holder beside stale `holders` means a version of Latch that knows
 * only locks took the key and kept the fields it did not know: that record is a plain lock.
 */
export function isSemaphore(
  record: LockRecord | undefined,
): record is LockRecord & { holders: SlotHolder[] } {
  if (!record?.holders) return false;
  return record.holders.length === 0 ? record.holder === null : record.holder?.lockId === SEMAPHORE_HOLDER_ID;
}

/** The limit a record was written with: a plain lock's is 1. */
export function limitOf(record: LockRecord): number {
  return isSemaphore(record) ? (record.limit ?? 1) : 1;
}

/** Every holder the record names, a plain lock's one holder included (with its token). */
export function holdersOf(record: LockRecord): SlotHolder[] {
  if (isSemaphore(record)) return record.holders;
  if (!record.holder) return [];
  return [{ ...record.holder, token: record.holder.token ?? record.token, writeId: record.writeId }];
}

export function slotOf(record: LockRecord | undefined, lockId: string): SlotHolder | undefined {
  return isSemaphore(record) ? record.holders.find((holder) => holder.lockId === lockId) : undefined;
}

/**
 * A semaphore record with `holders`, built on `previous` (its data and unknown fields kept).
 * `holder` repeats the holder whose lease ends last (a never-ending one first), so that a
 * plain-lock reader, or an older Latch, sees the key held while any holder may hold it.
 */
export function semaphoreRecord(
  previous: LockRecord | undefined,
  limit: number,
  holders: SlotHolder[],
  token: number,
  writeId: string,
): LockRecord {
  const record: LockRecord = { token, holder: lastToEnd(holders), writeId, limit, holders };
  if (previous?.data !== undefined) record.data = previous.data;
  if (previous?.extensions !== undefined) record.extensions = previous.extensions;
  return record;
}

function lastToEnd(holders: SlotHolder[]): LeaseHolder | null {
  let last: SlotHolder | undefined;
  for (const holder of holders) {
    if (last === undefined || endsAfter(holder, last)) last = holder;
  }
  if (!last) return null;
  const { token: _token, writeId: _writeId, extensions: _extensions, ...lease } = last;
  // The longest lease too: an untrusted-clock reader times the record by it, and holders'
  // clocks may disagree about which lease ends last.
  const longest = holders.some((holder) => holder.leaseMs === null)
    ? null
    : Math.max(...holders.map((holder) => holder.leaseMs as number));
  return {
    ...lease,
    lockId: SEMAPHORE_HOLDER_ID,
    leaseMs: longest,
    expiresAt: longest === null ? null : lease.expiresAt,
  };
}

function endsAfter(a: SlotHolder, b: SlotHolder): boolean {
  if (b.expiresAt === null) return false;
  return a.expiresAt === null || a.expiresAt > b.expiresAt;
}

/** How a semaphore lease looks to its Lock: a lock record with this holder and its token. */
export function slotView(record: LockRecord, slot: SlotHolder): LockRecord {
  const { token, writeId: _writeId, ...holder } = slot;
  const view: LockRecord = { token, holder, writeId: record.writeId };
  if (record.data !== undefined) view.data = record.data;
  return view;
}

/**
 * Refuses to take a slot beside holders that use another limit: each would count holders
 * against its own limit, and together they could exceed both. `live` are the holders that
 * still hold the key; without any, the key may change its limit.
 */
export function checkSameLimit(
  key: string,
  limit: number,
  current: VersionedRecord | null,
  live: readonly SlotHolder[],
): void {
  if (!current || live.length === 0) return;
  const stored = limitOf(current.record);
  if (stored === limit) return;
  throw new LockLimitMismatchError(key, stored, limit, '');
}
