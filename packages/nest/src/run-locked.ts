import { LockTimeoutError } from '@latch/core';
import { runWithCurrentLock } from './current-lock.js';
import { lockRegistryOf } from './lock-binding.js';
import { LockedException } from './locked.exception.js';
import { lockedCall } from './locked-acquire-options.js';
import type { LockedMethod } from './locked-method.js';

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
  const { options, acquire } = lockedCall(spec, defaults);

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
      throw new LockedException(error, Date.now(), options.retryAfterSeconds);
    }
    throw error;
  }
}
