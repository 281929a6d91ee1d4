/**
 * The lock record: one per key, the unit every store compares-and-swaps.
 * It outlives releases (holder = null) so that the fencing token never goes back.
 */
export interface LockRecord {
  /**
   * Highest fencing token ever issued or reserved for this key: the next acquisition takes a
   * higher one. Above `holder.token` it reserves tokens for holders the client may pass the
   * lock to without a write (see LeaseHolder.token).
   */
  token: number;
  /** The current lease, or null when the lock is free. */
  holder: LeaseHolder | null;
  /** User data (any JSON value), kept across releases; undefined when none was ever stored. */
  data?: unknown;
  /** Random id of the write that produced this record, to recognise our own write after an ambiguous outcome. */
  writeId: string;
  /**
   * Semaphores only: how many may hold the key at once (2 or more; absent on a plain lock).
   * Kept when the last holder leaves, so inspect can still tell what the key is.
   */
  limit?: number;
  /**
   * Semaphores only: every current holder, each with its own token. `holder` then repeats the
   * one whose lease ends last, so that a reader that knows only plain locks sees the key held
   * exactly as long as some holder may still hold it.
   */
  holders?: SlotHolder[];
  /**
   * Fields of the stored record this version of Latch does not know (a newer version wrote
   * them): carried over unchanged on every write, so upgrading one replica loses nothing.
   */
  extensions?: Record<string, unknown>;
}

export interface LeaseHolder {
  /** The client's owner id (host, pid and a random part by default). */
  owner: string;
  /** Random id of this acquisition; a handle names it. */
  lockId: string;
  /** Holder's wall clock when it acquired, ms since epoch. */
  acquiredAt: number;
  /** Holder's wall clock at the last renewal, ms since epoch. */
  renewedAt: number;
  /** Lease length; null for fail-closed locks that never expire. */
  leaseMs: number | null;
  /**
   * renewedAt + leaseMs on the holder's wall clock; null for fail-closed locks, and for holders on
   * untrusted clocks (their wall clock may be far off: every waiter judges their lease by
   * watching the record).
   */
  expiresAt: number | null;
  /** Who and why, for humans. */
  context?: string | undefined;
  /**
   * This holder's fencing token when it is below the record's (absent: the record's token).
   * The client that holds the record passes the lock among its own callers without a write,
   * each taking the next reserved token; the record shows the latest of them as of its last
   * write (a renewal at the latest).
   */
  token?: number;
  /** Holder fields this version of Latch does not know, carried over unchanged. */
  extensions?: Record<string, unknown>;
}

/** The fencing token of a plain lock's holder: its own, or the record's. */
export function holderToken(record: LockRecord): number {
  return record.holder?.token ?? record.token;
}

/** One holder of a semaphore: a lease like a lock's, with its own token and last write id. */
export interface SlotHolder extends LeaseHolder {
  /** The fencing token this holder got when it acquired. */
  token: number;
  /**
   * Random id of the last write that changed this holder: the record's own writeId moves with
   * every other holder's writes, this one only with ours (recognising our write, and telling an
   * entry that was renewed from one that was not on untrusted clocks).
   */
  writeId: string;
}

/** A record as read from a store, with the version a conditional write must name. */
export interface VersionedRecord {
  version: string;
  record: LockRecord;
}

export const RECORD_SCHEMA = 1;
