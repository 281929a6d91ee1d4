import type { LockStore } from '../contract/lock-store.js';
import type { LockTelemetry } from './lock-telemetry.js';

/** The store operations counted, each with the key as its first argument. */
const COUNTED = new Set(['read', 'write', 'delete', 'claim', 'serverTime']);

/**
 * The store a LockClient uses, counting each request by operation and outcome: `ok`,
 * `conflict` (a conditional write or claim that did not apply) or `error` (it threw; the error
 * is passed on unchanged). A Proxy, so that everything else of the store — its optional
 * methods, whether `claim` exists at all — stays exactly as the store has it.
 */
export function instrumentStore(store: LockStore, telemetry: LockTelemetry): LockStore {
  // One wrapper per method, made on first use: the engine reads store methods on every request.
  type Method = (...args: unknown[]) => unknown;
  const wrappers = new Map<PropertyKey, { of: Method; wrapper: Method }>();
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const cached = wrappers.get(property);
      if (cached !== undefined && cached.of === value) return cached.wrapper;
      const wrapper = wrap(target, property, value as Method, telemetry);
      wrappers.set(property, { of: value, wrapper });
      return wrapper;
    },
  });
}

function wrap(
  target: LockStore,
  property: PropertyKey,
  method: (...args: unknown[]) => unknown,
  telemetry: LockTelemetry,
): (...args: unknown[]) => unknown {
  // Called on the store itself, not the Proxy: a class store's #private fields need that.
  if (typeof property !== 'string' || !COUNTED.has(property)) return method.bind(target);
  return async (key: unknown, ...rest: unknown[]) => {
    let result: unknown;
    try {
      result = await method.call(target, key, ...rest);
    } catch (error) {
      telemetry.storeRequest(property, key as string, 'error', error);
      throw error;
    }
    const applied = property === 'read' || (result as { ok?: boolean } | null)?.ok !== false;
    telemetry.storeRequest(property, key as string, applied ? 'ok' : 'conflict');
    return result;
  };
}
