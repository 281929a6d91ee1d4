import type { LockRecord, VersionedRecord } from '../contract/lock-record.js';
import type { ResolvedClock } from '../shared/clock.js';
import type { LockCorruptedError } from '../shared/errors.js';
import type { RetryPolicy } from '../shared/retry.js';
import type { StoreVerdict } from '../verify/store-verdict.js';
import type { StoreLease } from './store-lease.js';

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

/** What a caller asks of a new store lease: its acquisition, lease and renewal pace. */
export interface LeaseRequest {
  readonly key: string;
  /** The acquisition: the holder entry the lease writes (a handle names it). */
  readonly lockId: string;
  readonly context?: string | undefined;
  /** Lease length; Infinity: fail-closed. */
  readonly leaseMs: number;
  /** How many may hold the key at once: 1 for a lock. */
  readonly limit: number;
  /** Renewal interval, or false for none. */
  readonly heartbeatMs: number | false;
  /** For leases nothing renews: how often to read the record to learn it was taken away. */
  readonly verifyMs: number;
  /** A waiter's: the key's poller paces its tries (`attempt`). */
  readonly pacedByCaller?: boolean;
}

/** An acquisition taken over by its handle (`resume`): its lease, held now, and its entry's fields. */
export interface ResumedLease {
  readonly lease: StoreLease;
  readonly token: number;
  readonly leaseMs: number;
  readonly limit: number;
  readonly acquiredAt: number;
  readonly context: string | undefined;
}

/**
 * How leases are taken, kept and given back on one kind of store. LockClient drives any engine
 * the same way (waiting, turns, hand-offs and events are written once, above this): an engine
 * makes the store lease of each acquisition (`newLease`), which claims, renews, releases and
 * resolves its own writes. Two exist: the compare-and-swap protocol over a LockStore, whose
 * leases are the protocol state machine's writers, and the S3 list strategy.
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
  /** Throws LockConfigError when `data` cannot be stored (in `record`, when known). */
  checkData(data: unknown, record?: LockRecord): void;
  /** Throws LockConfigError when a lease cannot be adopted by another client (`resume`). */
  checkResume(): void;
  /** The key's current holder as a record (null: free), without changing anything. */
  read(key: string, signal?: AbortSignal): Promise<VersionedRecord | null>;
  /** Milliseconds until `current` may become claimable, if this client can tell. */
  msUntilClaimable(key: string, current: VersionedRecord | null): number | undefined;
  /** The store lease of one acquisition, not started yet. */
  newLease(request: LeaseRequest): StoreLease;
  /** Awaited before each try at a key: what the engine checks before its first claim (a store check); undefined once nothing is left to check. */
  beforeClaim(key: string): Promise<void> | undefined;
  /** Throws when `current`, which a try found held, cannot be waited for with `limit` (LockLimitMismatchError). */
  checkHeld(key: string, limit: number, current: VersionedRecord | null): void;
  /**
   * Takes over the acquisition `lockId` of `key` by its handle (fencing token `token`): renewed
   * at once, so that writes of its old process can no longer land. `settingsFor` says how the
   * lease is kept, from its entry's lease and limit (it may throw, before any write); `adopt`
   * gets the lease before its first write.
   * LockNotHeldError when the acquisition ended.
   */
  resume(
    key: string,
    lockId: string,
    token: number,
    settingsFor: (leaseMs: number, limit: number) => Pick<LeaseRequest, 'heartbeatMs' | 'verifyMs'>,
    adopt: (lease: StoreLease) => void,
  ): Promise<ResumedLease>;
  /** Releases the acquisition `lockId` of `key` by its handle, storing data when given. LockNotHeldError when it ended. */
  releaseByHandle(key: string, lockId: string, token: number, data?: { value: unknown }): Promise<void>;
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
