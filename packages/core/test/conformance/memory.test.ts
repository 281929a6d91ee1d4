import type { LockStore } from '../../src/contract/lock-store.js';
import { LockStoreError, memoryStore } from '../../src/index.js';
import { describeLockConformance } from './lock-conformance.js';

describeLockConformance('the memory store', async () => {
  const shared = memoryStore();
  let broken = false;
  const failIfBroken = () => {
    if (broken)
      throw new LockStoreError('memory store: writes are broken for this test', { retryable: true });
  };
  // The memory store cannot fail by itself; this wrapper fails its writes on demand.
  const store: LockStore = {
    ...shared,
    write: async (key, record, condition) => {
      failIfBroken();
      return shared.write(key, record, condition);
    },
    delete: async (key, version) => {
      failIfBroken();
      return shared.delete(key, version);
    },
  };
  return {
    name: 'memory',
    store: () => store,
    breakWrites: () => {
      broken = true;
      return () => {
        broken = false;
      };
    },
    corrupt: async (key) => {
      shared.documents.set(key, { version: 'corrupt-1', text: '{"latch":1,"token":"seven"' });
    },
    stop: async () => {},
  };
});
