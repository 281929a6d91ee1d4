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
    return {
      store: () => store,
      breakWrites,
      corrupt: async (key) => {
        shared.documents.set(key, { version: 'corrupt-1', text: '{"latch":1,"token":"seven"' });
      },
    };
  },
});
