import type { LockKeyOf } from './key-template.js';
import type { LockedOptions } from './locked-options.js';

/** What `@Locked()` recorded about one method, checked when it was decorated. */
export interface LockedMethod {
  /** "ClassName.method", for messages and the default context. */
  where: string;
  /** The client's name in the LockRegistry. */
  client: string;
  keyOf: LockKeyOf;
  options: LockedOptions;
}

const LOCKED_METHODS = Symbol.for('latch:locked-methods');

/** The `@Locked()` specs of a method (more than one when decorated twice), outermost last. */
export function lockedMethodsOf(method: unknown): readonly LockedMethod[] {
  if (typeof method !== 'function') return [];
  return (Reflect.getOwnMetadata(LOCKED_METHODS, method) as LockedMethod[] | undefined) ?? [];
}

export function markLockedMethod(wrapper: object, spec: LockedMethod): void {
  Reflect.defineMetadata(LOCKED_METHODS, [...lockedMethodsOf(wrapper), spec], wrapper);
}
