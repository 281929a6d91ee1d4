import type { LockRecord, VersionedRecord } from '../contract/lock-record.js';
import type { LockLostError } from '../shared/errors.js';

/** How a store lease's writer ended. */
export type LeaseEnd = 'released' | 'handedOver' | 'lost' | 'gaveUp';

/** What one try at a key found: won (its fencing token), or held by others as the record shows (null: no record). */
export type AttemptResult = { readonly token: number } | { readonly held: VersionedRecord | null };

/**
 * One store lease of a client, from the first try at the key to its end: the writer of one
 * holder entry (a lock, or a semaphore's slot). It renews itself, resolves its own writes of
 * unknown outcome, and gives back whatever it may own once nobody wants it. The Locks of a
 * client are sub-leases on it: a local pass hands it from one caller to the next with no write.
 * The compare-and-swap engine's is the protocol state machine's driver (cas/writer-driver.ts);
 * the S3 list strategy's wraps its engine (list/list-lease.ts).
 */
export interface StoreLease {
  readonly key: string;
  /** The acquisition its holder entry names (a handle carries it). */
  readonly lockId: string;
  /** Aborts with a LockLostError once the lease is lost. */
  readonly signal: AbortSignal;
  /** Settles once the writer ends, with how. */
  readonly ended: Promise<LeaseEnd>;
  /** Resolves with the fencing token once the lease is held (won by a try, or handed over). */
  readonly acquired: Promise<number>;
  /** Whether the writer ended. */
  readonly isOver: boolean;
  /** The token of the caller holding the lease now, or undefined when it is not held with trust. */
  readonly heldToken: number | undefined;
  /** The record as the lease last saw it: its data, and the holder entry's expiry. */
  readonly record: LockRecord | undefined;
  /**
   * One try at the key, for a writer its caller paces: resolves with the token or the record
   * that shows the key held; rejects with the store's error, or LockLostError once it ended.
   */
  attempt(): Promise<AttemptResult>;
  /** Checks the clocks now: a lease past its deadline is lost before this returns. */
  check(): void;
  /** Renews now for `leaseMs` (null: fail-closed), storing `data` when given (an extend, an update). */
  extend(leaseMs: number | null, data?: unknown): Promise<void>;
  /** Releases, storing `data` when given; with `holdMs`, shortens the lease to run out instead. */
  release(data?: unknown, holdMs?: number): Promise<void>;
  /** Whether it can hand over (`handOver`): the S3 list strategy cannot. */
  readonly handsOver: boolean;
  /** Releases straight to `next`, a waiting lease of this client for the key, in one write. */
  handOver(next: StoreLease, data?: unknown): Promise<void>;
  /** Passes the lease on to another caller with no write: the token it takes, or undefined. */
  passLocally(leaseMs: number | null, context?: string): number | undefined;
  /** Nobody wants it any more: gives back whatever it may own, then ends. */
  giveUp(): void;
  /** A forceRelease of this client's for the key begins; `end()` once it is answered. */
  forceReleasing(): { end(): void };
  /** Whether the write `writeId` (a record's or an entry's) is one of this lease's own. */
  wrote(writeId: string): boolean;
  /** Who hears what happens to the lease from now on: the Lock holding it (replaces the one before). */
  watch(watcher: LeaseWatcher | undefined): void;
}

/**
 * Whether `lease` still holds with `token` once the clocks are checked. A lease can end between
 * the answer that won it and the caller it is for (a suspend that outlived it is seen on the
 * first look at the clocks): such a lease is never handed to a caller.
 */
export function stillHeld(lease: StoreLease, token: number): boolean {
  lease.check();
  return lease.heldToken === token;
}

/** What the holder of a store lease hears. */
export interface LeaseWatcher {
  /** A write of the holder landed and trusts the lease anew (a heartbeat, an extend, an update). */
  renewed(): void;
  /** The lease is lost (its deadline passed, or the record moved on without it). */
  lost(error: LockLostError): void;
  /** The writer ended (a release settled in the background ends it too). */
  ended(end: LeaseEnd): void;
}
