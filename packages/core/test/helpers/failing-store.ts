import { type LockStore, type LockStoreError, memoryStore } from '../../src/index.js';

/**
 * A store (a memory store unless `inner` is given) whose reads and writes fail with
 * `failure()` whenever it returns an error, as a store that is down or throttling would.
 * `state.requests` counts every request, failed or not.
 */
export function failingStore(failure: () => LockStoreError | undefined, inner: LockStore = memoryStore()) {
  const state = { requests: 0 };
  const guard = () => {
    state.requests++;
    const error = failure();
    if (error) throw error;
  };
  const store: LockStore = {
    ...inner,
    read: async (key) => {
      guard();
      return inner.read(key);
    },
    write: async (key, record, condition) => {
      guard();
      return inner.write(key, record, condition);
    },
  };
  return { store, state };
}
