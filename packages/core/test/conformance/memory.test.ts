import { breakableWrites, describeLockConformance } from '@latch/testing/conformance';
import * as latch from '../../src/index.js';
import { LockStoreError, memoryStore } from '../../src/index.js';

describeLockConformance({
  latch,
  name: 'the memory store',
  start: async () => {
    const shared = memoryStore();
    // The memory store cannot fail by itself; this wrapper fails its writes on demand.
    const { store, breakWrites } = breakableWrites(
      shared,
      () => new LockStoreError('memory store: writes are broken for this test', { retryable: true }),
    );
    let listRequests = 0;
    store.list = (prefix, cursor) => {
      listRequests++;
      return shared.list!(prefix, cursor);
    };
    return {
      store: () => store,
      breakWrites,
      listRequests: () => listRequests,
      corrupt: async (key) => {
        shared.documents.set(key, { version: 'corrupt-1', text: '{"latch":1,"token":"seven"' });
      },
    };
  },
  // Pages of 1,000 keys, as on S3.
  listPagingLocks: 1001,
});
