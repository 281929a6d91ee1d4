import { LockConfigError, LockLostError } from '../shared/errors.js';
import type { Scheduler } from '../shared/scheduler.js';
import { describe } from '../shared/validation.js';
import type { Lock } from './lock.js';
import type { AcquireOptions } from './lock-options.js';

/**
 * Several locks taken together by `locks.acquireAll(keys)`: every key or none. Each lock keeps
 * its own lease and fencing token; the set's `signal` aborts as soon as any of them is lost.
 */
export class LockSet<T = unknown> implements AsyncDisposable {
  /** The keys, in the order they were acquired (sorted, the same in every process). */
  readonly keys: readonly string[];
  /** Each key's lock. */
  readonly locks: ReadonlyMap<string, Lock<T>>;
  private readonly lostSignal: AbortSignal;

  /** @internal */
  constructor(locks: Lock<T>[]) {
    this.keys = locks.map((lock) => lock.key);
    this.locks = new Map(locks.map((lock) => [lock.key, lock]));
    this.lostSignal = AbortSignal.any(locks.map((lock) => lock.signal));
  }

  /** The lock of `key`; LockConfigError when `key` is not in this set. */
  lock(key: string): Lock<T> {
    const lock = this.locks.get(key);
    if (!lock) {
      throw new LockConfigError(
        `This lock set holds ${this.keys.map((k) => `"${k}"`).join(', ')}, not "${key}".`,
      );
    }
    return lock;
  }

  /** Each key's fencing token: pass the token of each resource's key to that resource. */
  get fencingTokens(): Readonly<Record<string, number>> {
    return Object.fromEntries(this.keys.map((key) => [key, this.locks.get(key)!.fencingToken]));
  }

  /** Aborts (reason: that lock's LockLostError) when any lock of the set is lost. */
  get signal(): AbortSignal {
    // Reading each lock's signal checks its lease's end, as reading one lock's signal does.
    for (const lock of this.locks.values()) void lock.signal;
    return this.lostSignal;
  }

  /** True while every lock of the set is held. */
  get isHeld(): boolean {
    return [...this.locks.values()].every((lock) => lock.isHeld);
  }

  /**
   * Releases every lock (all are tried, at once). Throws the first failure after trying them
   * all: a LockLostError when a lock was lost first, or a store error (that lock's release is
   * then retried in the background).
   */
  async release(): Promise<void> {
    const results = await Promise.allSettled([...this.locks.values()].map((lock) => lock.release()));
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** `await using set = await locks.acquireAll(keys)`: releases at scope exit; a lost lock is not an error here. */
  async [Symbol.asyncDispose](): Promise<void> {
    const results = await Promise.allSettled(
      [...this.locks.values()].map((lock) => lock[Symbol.asyncDispose]()),
    );
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

/** What acquireAll needs of its client. */
export interface SetAcquirer {
  acquire<T>(key: string, options: AcquireOptions): Promise<Lock<T>>;
  readonly time: Scheduler;
}

/** The keys of an acquireAll call, checked, without duplicates, in the order every process takes them. */
export function orderedKeys(keys: unknown): string[] {
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new LockConfigError(`acquireAll(keys) needs a non-empty array of keys, got ${describe(keys)}.`);
  }
  const seen = new Set<string>();
  for (const key of keys) {
    if (typeof key === 'string' && seen.has(key)) {
      throw new LockConfigError(`acquireAll(keys) got "${key}" twice; list each key once.`);
    }
    seen.add(key);
  }
  // One global order (UTF-16 code units, as sort() compares): two calls with overlapping keys
  // take the shared ones in the same order, so neither can hold one the other waits for first.
  return [...keys].sort();
}

/**
 * Takes `keys` one after the other in their global order, within one `waitMs` for all. If any
 * cannot be taken in time (or waiting is cancelled, or the store fails), those already taken
 * are released before the error is thrown (at once: no minimum hold, no caller ever had them):
 * the caller never holds part of the set.
 */
export async function acquireAllKeys<T>(
  acquirer: SetAcquirer,
  keys: string[],
  options: AcquireOptions,
): Promise<LockSet<T>> {
  const waitMs = options.waitMs ?? Number.POSITIVE_INFINITY;
  const startedAt = acquirer.time.monotonic();
  const taken: Lock<T>[] = [];
  try {
    for (const key of keys) {
      const left = Math.max(0, waitMs - (acquirer.time.monotonic() - startedAt));
      taken.push(await acquirer.acquire<T>(key, { ...options, waitMs: left }));
    }
  } catch (error) {
    await Promise.allSettled(taken.map((lock) => lock.releaseUnused()));
    throw error;
  }
  const set = new LockSet(taken);
  if (set.signal.aborted) {
    // One was lost while the others were being taken: the set was never whole.
    await Promise.allSettled(taken.map((lock) => lock.releaseUnused()));
    throw set.signal.reason instanceof LockLostError
      ? set.signal.reason
      : new LockLostError(keys[0]!, 'lost while the set was being taken');
  }
  return set;
}
