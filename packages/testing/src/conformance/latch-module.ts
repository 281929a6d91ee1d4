// What the suites take from the `@latch/core` module they are given. The caller passes the
// module (`import * as latch from '@latch/core'`), so @latch/testing needs no dependency on
// core and the store is tested with the caller's own copy of it. The types below describe,
// structurally, only the members the suites use.

/** An error class the suites check with `toBeInstanceOf`. */
export type ErrorClass<E extends Error = Error> = abstract new (...args: never[]) => E;

/** How a waiter judges expiry; mirrors core's `clock` option. */
export type ClockOption =
  | 'trusted'
  | 'untrusted'
  | {
      mode?: 'trusted' | 'untrusted';
      time?: {
        now(): number;
        monotonic(): number;
        setTimer?(callback: () => void, ms: number, options?: { keepAlive?: boolean }): { cancel(): void };
      };
    };

/**
 * The `LockClient` options the suites set. `Store` is whatever the module's `LockClient`
 * takes as `store` (a `LockStore`, or an opaque strategy such as `s3ListStore`'s).
 */
export interface ClientOptionsLike<Store> {
  store: Store;
  leaseMs?: number;
  heartbeatMs?: number | false;
  pollMs?: number;
  clock?: ClockOption;
  retry?: { attempts?: number; baseMs?: number; maxMs?: number };
  onEvent?: (event: { type: string; key: string }) => void;
}

/** The `acquire()` options the suites set. */
export interface AcquireOptionsLike {
  waitMs?: number;
  signal?: AbortSignal;
  leaseMs?: number;
  heartbeatMs?: number | false;
  context?: string;
  onLost?: (error: Error) => void;
  lockAtLeastMs?: number;
  /** How many may hold the key at once (a semaphore when 2 or more). */
  limit?: number;
}

/** The `tryAcquire()` options the suites set. */
export interface TryAcquireOptionsLike {
  leaseMs?: number;
  heartbeatMs?: number | false;
  context?: string;
  limit?: number;
}

/** A held lock; mirrors core's `Lock<T>`. */
export interface LockLike<T = unknown> {
  readonly fencingToken: number;
  readonly handle: string;
  readonly signal: AbortSignal;
  readonly data: T | undefined;
  readonly expiresAt: number | null;
  readonly isHeld: boolean;
  extend(ms: number): Promise<void>;
  update(data: T): Promise<void>;
  release(options?: { data?: T }): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** One holder of a key in `inspect()`'s report; mirrors core's `LockHolderInfo`. */
export interface LockHolderInfoLike {
  owner: string;
  context?: string;
  acquiredAt: number;
  expiresAt: number | null;
  state: 'held' | 'expired';
  fencingToken: number;
}

/** What `inspect()` (and `list()`, for each key) reports; mirrors core's `LockInfo<T>`. */
export interface LockInfoLike<T = unknown> {
  key: string;
  state: 'free' | 'held' | 'expired';
  fencingToken: number;
  /** 1 for a lock, the semaphore's limit otherwise. */
  limit: number;
  /** Every holder, in the order they acquired. */
  holders: LockHolderInfoLike[];
  owner?: string;
  context?: string;
  expiresAt?: number | null;
  data?: T;
}

/** Locks taken together by `acquireAll()`; mirrors core's `LockSet<T>`. */
export interface LockSetLike<T = unknown> {
  /** The keys, sorted: the order they were acquired in. */
  readonly keys: readonly string[];
  readonly fencingTokens: Readonly<Record<string, number>>;
  readonly signal: AbortSignal;
  readonly isHeld: boolean;
  lock(key: string): LockLike<T>;
  release(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A leader-election campaign; mirrors core's `Campaign`. */
export interface CampaignLike {
  readonly lock: LockLike | undefined;
  stop(): Promise<void>;
}

/** A `LockClient` instance, as far as the lock suite uses one. */
export interface LockClientLike {
  readonly owner: string;
  acquire<T = unknown>(key: string, options?: AcquireOptionsLike): Promise<LockLike<T>>;
  tryAcquire<T = unknown>(key: string, options?: TryAcquireOptionsLike): Promise<LockLike<T> | null>;
  withLock<R>(key: string, fn: (lock: LockLike) => R | Promise<R>, options?: AcquireOptionsLike): Promise<R>;
  acquireAll<T = unknown>(keys: readonly string[], options?: AcquireOptionsLike): Promise<LockSetLike<T>>;
  inspect<T = unknown>(key: string): Promise<LockInfoLike<T>>;
  /** Every lock whose key starts with `prefix`, as `inspect` reports it. */
  list<T = unknown>(prefix?: string, options?: { signal?: AbortSignal }): AsyncIterable<LockInfoLike<T>>;
  release(key: string, handle: string, options?: { data?: unknown }): Promise<void>;
  resume<T = unknown>(handle: string): Promise<LockLike<T>>;
  forceRelease(key: string): Promise<boolean>;
  campaign(
    key: string,
    options: {
      onElected(lock: LockLike): void | Promise<void>;
      onDemoted?(reason: 'lost' | 'resigned'): void;
    },
  ): CampaignLike;
  /** Rejects waiting acquires, then releases every lock the client still holds. */
  close(): Promise<void>;
}

/** The error classes both suites check, from `@latch/core` or `@latch/core/store`. */
export interface LatchErrors {
  LockConfigError: ErrorClass;
  /** `key` names the record that could not be read. */
  LockCorruptedError: ErrorClass<Error & { readonly key: string }>;
  LockStoreError: ErrorClass;
}

/**
 * The `@latch/core` module the lock suite runs on: pass `import * as latch from '@latch/core'`.
 * `Store` is inferred from it and from your backend's `store()`.
 */
export interface LatchModule<Store = never> extends LatchErrors {
  LockClient: new (options: ClientOptionsLike<Store>) => LockClientLike;
  LockLostError: ErrorClass;
  LockNotHeldError: ErrorClass;
  /** `limit` is set when the acquisition was for a slot of a semaphore. */
  LockTimeoutError: ErrorClass<Error & { readonly limit?: number | undefined }>;
}
