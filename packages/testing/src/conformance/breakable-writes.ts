import type { StoreUnderContract } from './store-shapes.js';

/** A store whose writes fail on demand, and the switch for `ConformanceBackend.breakWrites`. */
export interface BreakableWrites<S> {
  store: S;
  /** From now on every write and delete throws `makeError()`, until the returned function is called. */
  breakWrites(): () => void;
}

/**
 * Wraps `store` so that its writes and deletes can be made to fail, as a backend that cannot be
 * reached would fail them: what the lock suite needs to see renewals fail and locks end. Reads
 * go through. `makeError` should make the store's own retryable failure, e.g.
 * `() => new latch.LockStoreError('my store: unreachable', { retryable: true })`.
 */
export function breakableWrites<S extends StoreUnderContract>(
  store: S,
  makeError: () => Error,
): BreakableWrites<S> {
  let broken = false;
  const failIfBroken = () => {
    if (broken) throw makeError();
  };
  // Everything else (reads, checks, getters, extra members) comes from the store itself.
  const wrapped: S = Object.create(store);
  wrapped.write = async (key, record, condition) => {
    failIfBroken();
    return store.write(key, record, condition);
  };
  wrapped.delete = async (key, version) => {
    failIfBroken();
    return store.delete(key, version);
  };
  return {
    store: wrapped,
    breakWrites: () => {
      broken = true;
      return () => {
        broken = false;
      };
    },
  };
}
