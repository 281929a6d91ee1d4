import { holderToken, type VersionedRecord } from '../contract/lock-record.js';
import { holdersOf, isSemaphore, limitOf } from '../engine/cas/slot-records.js';

/** One holder of a key, as `inspect` reports it. */
export interface LockHolderInfo {
  /** The holding client's owner id. */
  owner: string;
  /** Who and why, as the holder stored it. */
  context?: string;
  /** Wall-clock start of this acquisition as stored (ms since epoch). */
  acquiredAt: number;
  /** When its lease ends on its own clock; null for a fail-closed lock, or a holder on untrusted clocks. */
  expiresAt: number | null;
  /** 'held' while its lease runs, 'expired' once it ran out (not yet taken over). */
  state: 'held' | 'expired';
  /** The fencing token it got when it acquired. */
  fencingToken: number;
}

/** What `inspect` reports about a key. */
export interface LockInfo<T = unknown> {
  key: string;
  /**
   * 'held' (lease running), 'expired' (holder's lease ran out, not yet taken over), 'free'. For
   * a semaphore: 'held' while any holder's lease runs.
   */
  state: 'free' | 'held' | 'expired';
  /**
   * A held lock's holder's token; otherwise the highest token issued or reserved so far (0 if
   * never acquired): the next acquisition gets a higher one. While a client passes a lock
   * among its own callers with no write, the record, and so this, shows the holder as of its
   * last write: at most one heartbeat behind.
   */
  fencingToken: number;
  /** How many may hold the key at once: 1 for a lock, the semaphore's limit otherwise. */
  limit: number;
  /** Every holder the record names, in the order they acquired (empty when free). */
  holders: LockHolderInfo[];
  /** The holder (for a semaphore: the one whose lease ends last). */
  owner?: string;
  context?: string;
  acquiredAt?: number;
  expiresAt?: number | null;
  data?: T;
}

/** What `inspect` reports for a record read at wall-clock time `now` (null: the key was never locked). */
export function describeRecord(key: string, current: VersionedRecord | null, now: number): LockInfo {
  if (!current) return { key, state: 'free', fencingToken: 0, limit: 1, holders: [] };
  const { record } = current;
  const holders = holdersOf(record)
    .map((holder): LockHolderInfo => {
      const info: LockHolderInfo = {
        owner: holder.owner,
        acquiredAt: holder.acquiredAt,
        expiresAt: holder.expiresAt,
        state: holder.expiresAt !== null && holder.expiresAt < now ? 'expired' : 'held',
        fencingToken: holder.token,
      };
      if (holder.context !== undefined) info.context = holder.context;
      return info;
    })
    .sort((a, b) => a.fencingToken - b.fencingToken);
  // A plain lock's holder may have a token below the record's, which reserves those above it.
  const fencingToken = isSemaphore(record) ? record.token : holderToken(record);
  const info: LockInfo = { key, state: 'free', fencingToken, limit: limitOf(record), holders };
  if (record.data !== undefined) info.data = record.data;
  const holder = record.holder;
  if (!holder) return info;
  info.state = holders.some((entry) => entry.state === 'held') ? 'held' : 'expired';
  info.owner = holder.owner;
  if (holder.context !== undefined) info.context = holder.context;
  info.acquiredAt = holder.acquiredAt;
  info.expiresAt = holder.expiresAt;
  return info;
}
