import { type AcquireOptions, LockConfigError } from '@latch/core';
import type { RegisteredLockClient } from './lock-registry.js';
import type { LockedMethod } from './locked-method.js';
import { type ResolvedLockedOptions, resolveLockedOptions } from './locked-options.js';

/**
 * What every call of a `@Locked()` method passes to core's `withLock`, and how it acts on a
 * held lock. Built in one place so that the client can check at bootstrap exactly what the
 * calls will pass.
 */
export function lockedCall(
  spec: LockedMethod,
  defaults: RegisteredLockClient['defaults'],
): { options: ResolvedLockedOptions; acquire: AcquireOptions } {
  const options = resolveLockedOptions(spec.options, defaults);
  // By default a store that fails the first try answers at once (a 503 or 500 the filter
  // logs), rather than being retried for the whole wait and then reported as "locked".
  const acquire: AcquireOptions = {
    context: spec.options.context ?? spec.where,
    failFastOnStoreError: options.failFastOnStoreError,
    // On the lock's spans (core's telemetry): which handler took it, "ClassName.method".
    attributes: { 'code.function.name': spec.where },
  };
  if (options.waitMs !== undefined) acquire.waitMs = options.waitMs;
  if (options.leaseMs !== undefined) acquire.leaseMs = options.leaseMs;
  if (options.lockAtLeastMs !== undefined) acquire.lockAtLeastMs = options.lockAtLeastMs;
  if (options.limit !== undefined) acquire.limit = options.limit;
  return { options, acquire };
}

/**
 * Has the method's client check its acquire options as `acquire` would — against its store too
 * (a `limit` the store cannot keep) — at bootstrap, the first moment the client is known. Returns
 * core's message, which says what is wrong and how to fix it, after the method's name; or
 * undefined when the options are fine.
 */
export function refusedLockedOptions(
  spec: LockedMethod,
  registered: RegisteredLockClient,
): string | undefined {
  try {
    registered.service.client.checkAcquireOptions(lockedCall(spec, registered.defaults).acquire);
    return undefined;
  } catch (error) {
    if (!(error instanceof LockConfigError)) throw error;
    return `@Locked() on ${spec.where}: ${error.message}`;
  }
}
