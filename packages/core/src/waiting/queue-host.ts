import type { Contender, LeaseEngine, LeaseState } from '../engine/lease-engine.js';
import type { HolderSummary } from '../shared/errors.js';
import type { LockEventReport } from '../shared/lock-events.js';

/** What a key's queue needs of the lock it hands out. */
export interface HeldLock {
  readonly key: string;
  readonly lease: LeaseState;
  readonly fencingToken: number;
  readonly expiresAt: number | null;
  readonly context: string | undefined;
  release(): Promise<void>;
  /** Frees a lock no caller ever got: at once, whatever minimum hold (lockAtLeastMs) it was asked for. */
  releaseUnused(): Promise<void>;
  /** Ends the lock as released (it was handed over, or a stale lease was dropped). */
  markReleased(): void;
}

/** One caller of `acquire` waiting for a key. */
export interface Waiter<L extends HeldLock, S> {
  contender: Contender;
  settings: S;
  resolve(lock: L): void;
  reject(error: unknown): void;
  settled: boolean;
  /** Set once a 'waiting' event was reported for this caller. */
  reportedWaiting?: boolean;
  /** The poller's claim for this caller still on its way, made with the contender it had then. */
  claimInFlight?: Promise<unknown>;
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
  /**
   * Sends `request`, which may win `key`; `forced` when a forceRelease of the key by this client
   * overlapped it (see ForceReleases).
   */
  send<R>(key: string, request: () => Promise<R>): Promise<{ value: R; forced: boolean }>;
  /** A forceRelease of `key` by this client is on its way. */
  forcing(key: string): boolean;
  /**
   * Makes sure an acquisition nobody waits for does not keep `key` (in the background), once
   * `when` (a claim of it still on its way) resolves true.
   */
  settleAbandoned(key: string, contender: Contender, when?: Promise<boolean>): void;
  /**
   * The lock for a lease just won, or undefined when it arrived too late to be trusted;
   * `passedFrom` is the local lock that passed `lease` on without a write.
   */
  createLock(lease: LeaseState, settings: S, passedFrom?: L): L | undefined;
  /**
   * Passes `lock`'s lease to the waiter `next` without a write, when the lock and the engine
   * allow it (see Lock.canPassTo and LeaseEngine.passLocally); false otherwise.
   */
  passLocally(lock: L, next: Waiter<L, S>): boolean;
  /** Who holds `key` as the client's current queue for it knows (that queue may not be this one). */
  holderSummary(key: string): HolderSummary | undefined;
  /** The local holder of the acquisition `lockId` of `key` in the client's current queue for it, if any. */
  holding(key: string, lockId: string): L | undefined;
  /** Puts `waiter` back in front of the client's current queue for `key` (made if needed), and polls. */
  requeue(key: string, waiter: Waiter<L, S>): void;
  /** Drops `queue` from the client when it is idle and still the key's current queue. */
  forget(queue: { readonly key: string; readonly idle: boolean }): void;
  closedError(): Error;
}
