import { AsyncLocalStorage } from 'node:async_hooks';
import type { Lock } from '@latch/core';

const heldLocks = new AsyncLocalStorage<Lock<unknown>>();

/**
 * The lock held by the innermost `@Locked()` method (or `LockService.withLock` callback) this
 * code runs in, or `undefined` outside one. Use `fencingToken` for writes downstream and
 * `signal` to stop work when the lock is lost.
 */
export function currentLock<T = unknown>(): Lock<T> | undefined {
  return heldLocks.getStore() as Lock<T> | undefined;
}

/** Runs `fn` with `lock` as the current lock. */
export function runWithCurrentLock<R>(lock: Lock<unknown>, fn: () => R): R {
  return heldLocks.run(lock, fn);
}
