import type { LockStore } from '../contract/lock-store.js';
import type { LeaseStrategy } from '../engine/lease-engine.js';
import type { ClockMode, ClockOptions } from '../shared/clock.js';
import { LockConfigError, type LockLostError } from '../shared/errors.js';
import type { LockEventListener } from '../shared/lock-events.js';
import type { RetryOptions } from '../shared/retry.js';
import { checkDuration } from '../shared/validation.js';
import type { SpanAttributes } from '../telemetry/span-attributes.js';
import type { TelemetryOptions } from '../telemetry/telemetry-options.js';

// The options of LockClient and of its calls, with the lists the option checks use.

export interface LockClientOptions {
  /** Where locks live: memoryStore(), s3Store(...), dynamoStore(...), or s3ListStore(...) for S3 without conditional writes. */
  store: LockStore | LeaseStrategy;
  /** Lease length in ms (default 30 000). Infinity makes fail-closed locks that never expire. */
  leaseMs?: number;
  /** Renewal interval in ms (default leaseMs / 3); false turns background renewal off. */
  heartbeatMs?: number | false;
  /** Owner id stored in records and shown by inspect (default host:pid:random). */
  owner?: string;
  /** 'trusted' (default) or 'untrusted' wall clocks; see ClockOptions. */
  clock?: ClockMode | ClockOptions;
  /** Backoff for throttled or failed store requests. */
  retry?: RetryOptions;
  /** Longest pause between two polls of a held lock, in ms (default 1000). */
  pollMs?: number;
  /**
   * How long waiters in this client may pass a contended lock among themselves, in ms, before
   * a release gives it back to the store so that waiters in other processes get a turn
   * (default pollMs; Infinity: never, for a client that is the only one using its keys).
   */
  localTurnMs?: number;
  /**
   * How long a waiting `acquire` goes on while every request to the store fails, in ms
   * (default 20 000; Infinity: until `waitMs` runs out). Then it rejects with the store's
   * error, so that a wrong endpoint or a store that is down is seen, not waited on for ever.
   * Each failed try is reported as a 'storeFailed' event. A busy lock, or a store that only
   * throttles, is not a failure.
   */
  storeErrorWaitMs?: number;
  /** Called for every acquired / renewed / released / lost / waiting / contended / storeFailed event, for dashboards and metrics. */
  onEvent?: LockEventListener;
  /**
   * OpenTelemetry spans and metrics through @opentelemetry/api, when it is installed (default:
   * on, to the global providers); false turns them off. See "Telemetry" in the README.
   */
  telemetry?: TelemetryOptions | false;
}

export interface AcquireOptions {
  /** How long to wait for a held lock, in ms: 0 = one try, Infinity = until acquired or `signal` aborts. Default Infinity. */
  waitMs?: number;
  /** Cancels waiting; rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Lease length for this lock (default: the client's). */
  leaseMs?: number;
  /** Renewal interval for this lock (default: the client's). */
  heartbeatMs?: number | false;
  /** Who and why, stored with the lock and shown to waiters ("deploy #42 on host-a"). */
  context?: string;
  /** Called once if the lease is lost (the lock's signal aborts at the same moment). */
  onLost?: (error: LockLostError) => void;
  /**
   * Keeps the lock held at least this long after acquiring, even when released sooner: the
   * release then shortens the lease to end at that point instead of freeing the lock.
   * For scheduled jobs every replica fires: a replica whose clock is a little late finds the
   * lock still held and skips, instead of running the job a second time.
   */
  lockAtLeastMs?: number;
  /**
   * When the first try fails because the store does (a LockStoreError), reject with that error
   * at once instead of retrying it while waiting (default false). For callers that must answer
   * soon, such as HTTP routes: a store that is down then means 503, not a long wait and a 423.
   * Store errors met later, while waiting, are still retried.
   */
  failFastOnStoreError?: boolean;
  /**
   * How many may hold `key` at once, across every process (default 1: a lock). With a limit of
   * 2 or more the key is a semaphore: each caller still gets its own Lock, with its own lease
   * and a fencing token above every earlier one of the key. Every holder of a key must use the
   * same limit; a call with another one is refused with a LockConfigError. At most 100.
   */
  limit?: number;
  /**
   * Attributes added to this acquisition's spans (not to metrics, where they could multiply
   * the series), e.g. `{ 'http.route': '/orders/:id' }`: string, finite number or boolean values.
   */
  attributes?: SpanAttributes;
}

/** Every option of the LockClient constructor: the compiler fails here when one is added or dropped. */
const CLIENT_OPTIONS: Record<keyof LockClientOptions, true> = {
  store: true,
  leaseMs: true,
  heartbeatMs: true,
  owner: true,
  clock: true,
  retry: true,
  pollMs: true,
  localTurnMs: true,
  storeErrorWaitMs: true,
  onEvent: true,
  telemetry: true,
};
export const CLIENT_OPTION_KEYS = Object.keys(CLIENT_OPTIONS);

/** Every option of acquire() and withLock(). */
const ACQUIRE_OPTIONS: Record<keyof AcquireOptions, true> = {
  waitMs: true,
  signal: true,
  leaseMs: true,
  heartbeatMs: true,
  context: true,
  onLost: true,
  lockAtLeastMs: true,
  failFastOnStoreError: true,
  limit: true,
  attributes: true,
};
export const ACQUIRE_OPTION_KEYS = Object.keys(ACQUIRE_OPTIONS);

/** The options of tryAcquire(), which never waits. */
export type TryAcquireOptions = Omit<AcquireOptions, 'waitMs' | 'signal' | 'failFastOnStoreError'>;
const TRY_ACQUIRE_OPTIONS: Record<keyof TryAcquireOptions, true> = {
  leaseMs: true,
  heartbeatMs: true,
  context: true,
  onLost: true,
  lockAtLeastMs: true,
  limit: true,
  attributes: true,
};
export const TRY_ACQUIRE_OPTION_KEYS = Object.keys(TRY_ACQUIRE_OPTIONS);
/** Options of acquire() that tryAcquire() refuses, with why. */
export const NOT_FOR_TRY_ACQUIRE: Record<Exclude<keyof AcquireOptions, keyof TryAcquireOptions>, string> = {
  waitMs: 'tryAcquire() never waits; use acquire(key, { waitMs }) to wait.',
  signal: 'tryAcquire() never waits, so there is nothing to cancel; use acquire(key, { signal }) to wait.',
  failFastOnStoreError: 'tryAcquire() always reports a store error at once.',
};

/** The options of list(). */
export interface ListOptions {
  /** Stops the listing: the iteration rejects with the signal's reason. */
  signal?: AbortSignal;
}
const LIST_OPTIONS: Record<keyof ListOptions, true> = { signal: true };
export const LIST_OPTION_KEYS = Object.keys(LIST_OPTIONS);

/** The options of resume(). */
export type ResumeOptions = Pick<AcquireOptions, 'heartbeatMs' | 'onLost'>;
const RESUME_OPTIONS: Record<keyof ResumeOptions, true> = { heartbeatMs: true, onLost: true };
export const RESUME_OPTION_KEYS = Object.keys(RESUME_OPTIONS);

export interface ResolvedClientSettings {
  leaseMs: number;
  heartbeatMs: number | false;
  pollMs: number;
  localTurnMs: number;
  storeErrorWaitMs: number;
}

/** The renewal interval a lock gets: `value` checked against its lease, or a third of the lease. */
export function resolveHeartbeat(
  value: number | false | undefined,
  leaseMs: number,
  name: string,
): number | false {
  if (!Number.isFinite(leaseMs)) return false; // fail-closed leases never need renewing
  if (value === false) return false;
  if (value === undefined) return leaseMs / 3;
  const heartbeatMs = checkDuration(name, value);
  if (heartbeatMs >= leaseMs) {
    throw new LockConfigError(
      `${name} (${heartbeatMs} ms) must be shorter than leaseMs (${leaseMs} ms), or renewals would land after the lease ends; the default is leaseMs / 3.`,
    );
  }
  return heartbeatMs;
}
