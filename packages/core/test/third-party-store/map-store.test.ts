import * as latch from '@latch/core';
import { LockStoreError } from '@latch/core/store';
import { breakableWrites, describeLockConformance, describeStoreContract } from '@latch/testing/conformance';
import { mapStore, type Row } from './map-store.js';

// The store itself: conditional writes, records kept exactly, unreadable rows reported.
describeStoreContract({
  latch,
  name: 'map store',
  list: true,
  start: async () => {
    const rows = new Map<string, Row>();
    return {
      store: mapStore(rows),
      maxKey: { length: 1024, unit: 'utf16-units' },
      // A row the codec did not write, as a broken or foreign writer would leave it.
      tamper: async (key, text) => {
        rows.set(key, { version: `tampered-${key}`, text });
      },
    };
  },
});

// Locks on the store through LockClient: exclusivity, expiry, renewal, loss, data, hand-off.
describeLockConformance({
  latch,
  name: 'map store',
  start: async () => {
    const rows = new Map<string, Row>();
    // Fails writes on demand, as a database that cannot be reached would.
    const { store, breakWrites } = breakableWrites(
      mapStore(rows),
      () => new LockStoreError('map store: writes are broken', { retryable: true }),
    );
    return {
      store: () => store,
      breakWrites,
      corrupt: async (key) => {
        rows.set(key, { version: 'corrupt', text: '{"latch":1,"token":' });
      },
    };
  },
});
