import type { LeaseEngine } from '../engine/lease-engine.js';
import type { StoreLease } from '../engine/store-lease.js';
import type { HolderSummary } from '../shared/errors.js';
import type { LockEventReport } from '../shared/lock-events.js';

/** Where a Lock's caller took the lease: its token, when (wall clock), its context, and whose client. */
export interface LockStart {
  readonly token: number;
  readonly acquiredAt: number;
  readonly context: string | undefined;
  readonly owner: string;
}

/** What a key's queue needs of the lock it hands out. */
export interface HeldLock {
  readonly key: string;
  readonly lease: StoreLease;
  readonly owner: string;
  readonly fencingToken: number;
  readonly acquiredAt: number;
  readonly expiresAt: number | null;
  readonly context: string | undefined;
  release(): Promise<void>;
  /** Ends the lock as released (it was handed over or passed on). */
  markReleased(): void;
}

/** One caller of `acquire` waiting for a key. */
export interface Waiter<L extends HeldLock, S> {
  /** Its own store lease, paced by the key's poller (a new one when it ended meanwhile). */
  lease: StoreLease;
  settings: S;
  resolve(lock: L): void;
  reject(error: unknown): void;
  settled: boolean;
  /** Set once a 'waiting' event was reported for this caller. */
  reportedWaiting?: boolean;
}

/**
 * What a key's queue needs of its client: the engine, the client's settings and background
 * work, its events, and the client's other queues (an entry may be dropped and made anew while
 * a request is in flight: a waiter put back goes into the key's current queue).
 */
export interface QueueHost<L extends HeldLock, S> {
  readonly engine: LeaseEngine;
  readonly settings: {
    readonly pollMs: number;
    readonly localTurnMs: number;
    readonly storeErrorWaitMs: number;
  };
  /** True once the client is closing. */
  isClosing(): boolean;
  /** False when nobody listens to events (so none are prepared). */
  reportsEvents(): boolean;
  report(event: LockEventReport): void;
  /** Keeps `work` among what the client's close() waits for. */
  track<R>(work: Promise<R>): Promise<R>;
  /** A forceRelease of `key` by this client is on its way. */
  forcing(key: string): boolean;
  /** A new store lease for a caller waiting for `key` (`limit` holders at once) with `settings`, paced by the key's poller. */
  newLease(key: string, limit: number, settings: S): StoreLease;
  /**
   * The lock for `lease`, just held with `token`; `passedFrom` is the local lock that passed it
   * on without a write; `start`, where its caller took it when that is known (a resume).
   */
  createLock(lease: StoreLease, token: number, settings: S, passedFrom?: L, start?: LockStart): L;
  /** Whether `lock`, being released, may pass its lease to the waiter `next` without a write (see Lock.canPassTo). */
  canPass(lock: L, next: Waiter<L, S>): boolean;
  /** The lease length a waiter asks for (null: fail-closed), and its context. */
  leaseMsOf(settings: S): number | null;
  contextOf(settings: S): string | undefined;
  /** Who holds `key` as the client's current queue for it knows (that queue may not be this one). */
  holderSummary(key: string): HolderSummary | undefined;
  /** Puts `waiter` back in front of the client's current queue for `key` (made if needed), and polls. */
  requeue(key: string, limit: number, waiter: Waiter<L, S>): void;
  /** Drops `queue` from the client when it is idle and still the key's current queue. */
  forget(queue: { readonly key: string; readonly idle: boolean }): void;
  closedError(): Error;
}
