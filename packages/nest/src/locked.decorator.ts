import 'reflect-metadata';
import { LockConfigError } from '@latch/core';
import { compileLockKey, type LockKey } from './key-template.js';
import { requireLockModule } from './lock-binding.js';
import { markLockedMethod } from './locked-method.js';
import { checkLockedOptions, type LockedOptions } from './locked-options.js';
import { keepMethodIdentity } from './method-identity.js';
import { runLocked } from './run-locked.js';
import { DEFAULT_LOCK_CLIENT } from './tokens.js';

/**
 * Runs the method while holding the lock `key`, one call at a time across every replica that
 * shares the store. `key` is a template over the arguments (`'invoice:{0}'`, `'user:{0.id}'`)
 * or a function of them. The method keeps `this` and the other decorators' metadata; it
 * always returns a Promise (a synchronous method's result is wrapped in one).
 * Inside it, `currentLock()` returns the lock.
 */
// biome-ignore lint/suspicious/noExplicitAny: a key function takes the decorated method's parameters, whatever they are.
export function Locked<Args extends any[] = any[]>(
  key: LockKey<Args>,
  options?: LockedOptions,
): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const where = describeMethod(target, propertyKey);
    if (typeof target === 'function') {
      throw new LockConfigError(
        `@Locked() cannot go on the static method ${where}: it has no Nest instance to find its lock client. Make it an instance method, or lock by hand with LockService.`,
      );
    }
    const original: unknown = descriptor.value;
    if (typeof original !== 'function') {
      throw new LockConfigError(`@Locked() goes on methods; ${where} is a getter, setter or property.`);
    }
    const checked = checkLockedOptions(options, where);
    const parameterTypes = Reflect.getMetadata('design:paramtypes', target, propertyKey) as
      | unknown[]
      | undefined;
    const spec = {
      where,
      client: checked.client ?? DEFAULT_LOCK_CLIENT,
      keyOf: compileLockKey(key, where, parameterTypes?.length),
      options: checked,
    };
    const wrapper = function (this: unknown, ...args: unknown[]): Promise<unknown> {
      return runLocked(this, spec, args, original as (...args: unknown[]) => unknown);
    };
    keepMethodIdentity(wrapper, original);
    markLockedMethod(wrapper, spec);
    requireLockModule(target);
    descriptor.value = wrapper as typeof descriptor.value;
    return descriptor;
  };
}

function describeMethod(target: object, propertyKey: string | symbol): string {
  const owner = typeof target === 'function' ? target.name : target.constructor?.name;
  return `${owner || 'anonymous class'}.${String(propertyKey)}`;
}
