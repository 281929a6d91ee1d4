import { type AcquireOptions, LockTimeoutError } from '@latch/core';
import { runWithCurrentLock } from './current-lock.js';
import { lockRegistryOf } from './lock-binding.js';
import { LockedException } from './locked.exception.js';
import type { LockedMethod } from './locked-method.js';
import { resolveLockedOptions } from './locked-options.js';

/**
 * One call of a `@Locked()` method: find the client, build the key, and run the method under
 * core's `withLock` (which acquires, releases, and reports a lease lost during the call).
 */
export async function runLocked(
  instance: unknown,
  spec: LockedMethod,
  args: unknown[],
  method: (...args: unknown[]) => unknown,
): Promise<unknown> {
  const { service, defaults } = lockRegistryOf(instance, spec.where).get(spec.client);
  const key = spec.keyOf(args);
  const options = resolveLockedOptions(spec.options, defaults);
  // By default a store that fails the first try answers at once (a 503 or 500 the filter
  // logs), rather than being retried for the whole wait and then reported as "locked".
  const acquire: AcquireOptions = {
    context: spec.options.context ?? spec.where,
    failFastOnStoreError: options.failFastOnStoreError,
  };
  if (options.waitMs !== undefined) acquire.waitMs = options.waitMs;
  if (options.leaseMs !== undefined) acquire.leaseMs = options.leaseMs;
  if (options.lockAtLeastMs !== undefined) acquire.lockAtLeastMs = options.lockAtLeastMs;

  let started = false;
  try {
    return await service.client.withLock(
      key,
      (lock) => {
        started = true;
        return runWithCurrentLock(lock, () => method.apply(instance, args));
      },
      acquire,
    );
  } catch (error) {
    // Only a timeout before the method started means "held by someone else"; a
    // LockTimeoutError thrown by the method itself passes through unchanged.
    if (!started && error instanceof LockTimeoutError) {
      if (options.onLocked === 'skip') return undefined;
      throw new LockedException(error);
    }
    throw error;
  }
}
