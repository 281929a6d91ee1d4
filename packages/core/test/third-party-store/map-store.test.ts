import * as latch from '@latch/core';
import { type LockStore, LockStoreError } from '@latch/core/store';
import { describeLockConformance, describeStoreContract } from '@latch/testing/conformance';
import { mapStore, type Row } from './map-store.js';

// The store itself: conditional writes, records kept exactly, unreadable rows reported.
describeStoreContract({
  latch,
  name: 'map store',
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
    const map = mapStore(rows);
    let broken = false;
    const check = () => {
      if (broken) throw new LockStoreError('map store: writes are broken', { retryable: true });
    };
    // Fails writes on demand, as a database that cannot be reached would.
    const store: LockStore = {
      ...map,
      write: async (key, record, condition) => {
        check();
        return map.write(key, record, condition);
      },
      delete: async (key, version) => {
        check();
        return map.delete(key, version);
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
        rows.set(key, { version: 'corrupt', text: '{"latch":1,"token":' });
      },
    };
  },
});
