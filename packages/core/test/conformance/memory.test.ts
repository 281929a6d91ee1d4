import { describeLockConformance } from '@latch/testing/conformance';
import * as latch from '../../src/index.js';
import { type LockStore, LockStoreError, memoryStore } from '../../src/index.js';

describeLockConformance({
  latch,
  name: 'the memory store',
  start: async () => {
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
    };
  },
});
