import type { LockRecord, VersionedRecord } from '../contract/lock-record.js';
import type { ResolvedClock } from '../shared/clock.js';
import type { LockCorruptedError } from '../shared/errors.js';
import type { RetryPolicy } from '../shared/retry.js';
import type { StoreVerdict } from '../verify/store-verdict.js';

/** What a caller asks for when acquiring: lease length (Infinity = fail-closed) and context. */
export interface LeaseTerms {
  leaseMs: number;
  context?: string | undefined;
  /** Semaphores: how many may hold the key at once (absent or 1: a plain lock). */
  limit?: number;
}

/** One acquisition attempt series: the lockId stays the same across retries, so a write of ours that lands late is still recognised as ours. */
export interface Contender {
  lockId: string;
  terms: LeaseTerms;
  /** Monotonic time the first write of this series was sent (a conservative lease start). */
  firstSentAt?: number;
  /** Monotonic time a lock of this client first sent a hand-over to this acquisition: a landed one found later counts from then. */
  handOverSentAt?: number;
  /** A write of this series had an unknown outcome: it may have landed, or may still land. */
  unsure?: boolean;
  /** Handed to the client's background settling once nobody waits for it any more. */
  abandoned?: boolean;
  /**
   * Ids of the writes this acquisition made (its claims; for a lock handed out, all of them). A
   * claim or settling then takes only a record (or slot) one of them produced as its own: the
   * same lock id with another write is a hand-over from a lock of its client (which that lock
   * settles) or the lock resumed elsewhere. Every acquisition has one (newContender); without
   * it, any record naming the lock id counts.
   */
  writeIds?: Set<string>;
  /**
   * Settling's own view of `writeIds`, with the ids of the claims settling made under this lock
   * id. Kept across its attempts: a claim of an earlier attempt that landed (its release then
   * failed) is ours to give back, not a lock resumed elsewhere.
   */
  settlingWriteIds?: Set<string>;
  /**
   * Set for a lock that handed over with an outcome unknown: the waiters it named. Settling
   * gives back a record one of its writes gave to one of them (the waiter left, or will find
   * the record gone and claim afresh).
   */
  handedTo?: Set<string>;
}

/** A new acquisition: its own lock id, and no write of it yet. */
export function newContender(lockId: string, terms: LeaseTerms): Contender {
  return { lockId, terms, writeIds: new Set() };
}

/**
 * Has the settling of `contender` give back `lease` too (a lease it was handed, or won, that
 * nobody got). Only settling learns its writes: a claim of the contender still on its way must
 * not take a hand-over for its own.
 */
export function settleWith(contender: Contender, lease: LeaseState): void {
  contender.settlingWriteIds ??= new Set();
  for (const id of lease.writeIds) contender.settlingWriteIds.add(id);
}

/** A lease we hold, as of our last successful write. Mutated in place by renewals. */
export interface LeaseState {
  key: string;
  lockId: string;
  /** What the engine needs to name our current write: a record version, or an object key. */
  version: string;
  /** The lock record as the holder sees it (engines without a record synthesise one; a semaphore's holder sees its own slot). */
  record: LockRecord;
  /** Semaphores: the whole record as of our last write or read, every holder in it. */
  shared?: LockRecord;
  /** Monotonic time just before the write that set the current expiry was sent. */
  sentAt: number;
  /** Monotonic time a read that showed the lease as ours was sent (a lock nothing renews checks). */
  verifiedAt?: number;
  /** Ids of writes this lease issued, to recognise them after an ambiguous outcome. */
  writeIds: Set<string>;
  /**
   * Lock ids this lease tried to hand over to. A hand-over of unknown outcome that landed
   * after its waiter left is still this lease's to release: nobody else can fence it off.
   */
  handedTo?: Set<string>;
  /**
   * Semaphores: the data each slot write of ours carried whose outcome is not yet known, by
   * that slot's write id. Finding such a slot in the record proves its data was stored then.
   * One caller's operation only: each new call from user code clears it (Lock).
   */
  slotData?: Map<string, unknown>;
  /**
   * Found in the store as ours (a write of this acquisition that landed unseen) rather than
   * written by the claim that returned it: renewed once before use (LeaseProtocol.claim).
   */
  adopted?: boolean;
}

export type ClaimResult = { lease: LeaseState } | { lease: null; current: VersionedRecord | null };

/**
 * How leases are taken, kept and given back on one kind of store. LockClient and Lock drive
 * any engine the same way (waiting, heartbeats, loss detection, events are written once, above
 * this); an engine decides only what one claim, renewal or release means on its store.
 * Two exist: the compare-and-swap LeaseProtocol over a LockStore, and the S3 list strategy.
 */
export interface LeaseEngine {
  /** Short store name for messages: 'memory', 's3', 'dynamodb', 's3-list'. */
  readonly kind: string;
  readonly clock: ResolvedClock;
  readonly retry: RetryPolicy;
  /** Throws LockConfigError when the key cannot be used with this store. */
  checkKey(key: string): void;
  /** Throws LockConfigError when a lease of `leaseMs` cannot work with this engine. */
  checkLeaseMs(leaseMs: number): void;
  /** Throws LockConfigError when this engine cannot keep `limit` holders of one key (semaphores). */
  checkLimit(limit: number): void;
  /** Throws LockConfigError when `data` cannot be stored (with `lease`, when known). */
  checkData(data: unknown, lease?: LeaseState): void;
  /** Throws LockConfigError when a lease cannot be adopted by another client (`resume`). */
  checkResume(): void;
  /** The key's current holder as a record (null: free), without changing anything. */
  read(key: string, signal?: AbortSignal): Promise<VersionedRecord | null>;
  /** Milliseconds until `current` may become claimable, if this client can tell. */
  msUntilClaimable(key: string, current: VersionedRecord | null): number | undefined;
  /** One acquisition attempt: a few requests, never waits for the holder. */
  claim(key: string, contender: Contender, signal?: AbortSignal): Promise<ClaimResult>;
  /** Renews a lease we hold (storing data when given). Throws LockLostError when it is no longer ours. */
  renew(lease: LeaseState, leaseMs: number, data?: { value: unknown }, signal?: AbortSignal): Promise<void>;
  /** Gives a lease back (storing data when given). Throws LockLostError when it was no longer ours. */
  release(lease: LeaseState, data?: { value: unknown }, signal?: AbortSignal): Promise<void>;
  /** Optional: releases straight to `next` in one write, for local waiters. */
  handOver?(
    lease: LeaseState,
    next: Contender,
    data?: { value: unknown },
    signal?: AbortSignal,
  ): Promise<LeaseState>;
  /**
   * Optional: passes a plain lease to another caller of this client with no write, the caller
   * taking the next reserved token; the next write stores its holder fields. False when no
   * reserved token is left (then hand over with a write).
   */
  passLocally?(lease: LeaseState, terms: LeaseTerms): boolean;
  /**
   * Optional: makes sure an acquisition nobody waits for any more (a claim of unknown outcome,
   * a lease lost while a write was in flight) does not keep the key: releases it if it landed,
   * and fences off writes of it that may still land. True when it had to release something.
   */
  settleAbandoned?(key: string, contender: Contender, signal?: AbortSignal): Promise<boolean>;
  /**
   * Optional: a lease of this client is over, however it ended (released, lost, handed over),
   * and no lock of this client uses it any more. An engine that keeps per-lease state (uploads
   * of it that may still land) lets it go here; it must not assume its own release ran.
   */
  leaseEnded?(lease: LeaseState): void;
  /** Whether `current`, just read, still shows `lease` as ours (a lock nothing renews checks this). */
  holds(lease: LeaseState, current: VersionedRecord | null): boolean;
  /**
   * The lease the acquisition `lockId` holds now; LockNotHeldError when it ended. `token` is
   * the handle's: a holder the record shows with a higher one means the lock was passed on.
   */
  leaseFromHandle(key: string, lockId: string, token?: number): Promise<LeaseState>;
  /**
   * Frees `key` whoever holds it: the lock ids of the acquisitions the freeing write ended
   * (empty when it replaced an unreadable record), or null when this call freed nothing.
   */
  forceRelease(key: string): Promise<ReadonlySet<string> | null>;
  /** Throws LockConfigError when this engine's store cannot list its keys. */
  checkList(): void;
  /**
   * Every key that starts with `prefix`, each with what `read` would return for it (or the
   * error that says why it cannot be read), in the store's listing order.
   */
  list(prefix: string, signal?: AbortSignal): AsyncIterable<ListedLock>;
}

/** A key `list` found: its record as `read` returns it (null: free), or why it cannot be read. */
export type ListedLock =
  | { key: string; current: VersionedRecord | null; error?: undefined }
  | { key: string; error: LockCorruptedError };

/** How many records a listing reads at once, for stores whose listing names keys only. */
export const LIST_READS_AT_ONCE = 8;

/** What a LockClient hands to a store that brings its own engine. */
export interface EngineEnvironment {
  clock: ResolvedClock;
  retry: RetryPolicy;
  owner: string;
}

/**
 * Where a strategy keeps its engine factory: a key shared by every copy of Latch in a process
 * (ES module and CommonJS builds), and absent from the public type, so only Latch's own
 * strategy stores can make one.
 */
const ENGINE_FACTORY = Symbol.for('latch.leaseStrategy.createEngine');
/** Where a strategy store keeps its own store check (see `verifyStore`). */
const STORE_PROBE = Symbol.for('latch.leaseStrategy.probe');

/**
 * A store that is not a compare-and-swap LockStore but brings its own lease engine
 * (`s3ListStore()`). Pass it as `new LockClient({ store })` like any store. Opaque: the engine
 * seam is internal, so only Latch's strategy stores make one; a new backend is a `LockStore`.
 */
export interface LeaseStrategy {
  /** Short name for messages: 's3-list'. */
  readonly kind: string;
  /** Brand: the engine inside is not part of the public API. */
  readonly [ENGINE_FACTORY]: unknown;
}

type EngineFactory = (environment: EngineEnvironment) => LeaseEngine;

/**
 * Makes a strategy store whose LockClients each drive an engine built by `createEngine`; `probe`
 * checks the store does what the strategy relies on (`verifyStore`).
 */
export function leaseStrategy(
  kind: string,
  createEngine: EngineFactory,
  probe?: () => Promise<StoreVerdict>,
): LeaseStrategy {
  return Object.freeze({ kind, [ENGINE_FACTORY]: createEngine, [STORE_PROBE]: probe });
}

/** The store check of a strategy store, or undefined when `store` is not one or has none. */
export function strategyProbeOf(store: unknown): (() => Promise<StoreVerdict>) | undefined {
  if (typeof store !== 'object' || store === null) return undefined;
  const probe = (store as Record<symbol, unknown>)[STORE_PROBE];
  return typeof probe === 'function' ? (probe as () => Promise<StoreVerdict>) : undefined;
}

/** The engine factory of a strategy store, or undefined when `store` is not one. */
export function engineFactoryOf(store: unknown): EngineFactory | undefined {
  if (typeof store !== 'object' || store === null) return undefined;
  const factory = (store as Record<symbol, unknown>)[ENGINE_FACTORY];
  return typeof factory === 'function' ? (factory as EngineFactory) : undefined;
}
