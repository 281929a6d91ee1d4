import 'reflect-metadata';

// Names a function keeps for itself; everything else on it belongs to decorators.
const OWN_FUNCTION_KEYS = new Set<string | symbol>(['prototype', 'arguments', 'caller']);

/**
 * Makes `wrapper` look like `original` to everything that reads a method: its name and arity,
 * and what other decorators put on the function — reflect-metadata (Nest's route path and
 * method, guards, interceptors, @Cron and @SetMetadata) and plain properties. Decorators
 * applied before ours wrote to `original`; those applied after ours write to `wrapper`
 * directly, so the order of decorators does not matter.
 */
export function keepMethodIdentity(wrapper: object, original: object): void {
  for (const key of Reflect.ownKeys(original)) {
    if (OWN_FUNCTION_KEYS.has(key)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(original, key);
    if (descriptor) Object.defineProperty(wrapper, key, descriptor);
  }
  for (const key of Reflect.getOwnMetadataKeys(original)) {
    Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, original), wrapper);
  }
}
