import type { LockStore } from '@latch/core';
import type { RequestTally } from './request-tally.js';

/**
 * Wraps a Latch store so each call the lease protocol makes is counted ('read', 'write',
 * 'delete', 'claim'). Used for the in-process memory store, which sends no network requests
 * but still shows how many store operations the protocol needs.
 */
export function countStoreCalls(store: LockStore, tally: RequestTally): LockStore {
  const counted: LockStore = {
    kind: store.kind,
    maxRecordBytes: store.maxRecordBytes,
    checkKey: (key) => store.checkKey(key),
    recordBytes: (record) => store.recordBytes(record),
    read: (key) => {
      tally.add('read');
      return store.read(key);
    },
    write: (key, record, condition) => {
      tally.add('write');
      return store.write(key, record, condition);
    },
    delete: (key, version) => {
      tally.add('delete');
      return store.delete(key, version);
    },
  };
  if (store.claim) {
    const claim = store.claim.bind(store);
    counted.claim = (key, request) => {
      tally.add('claim');
      return claim(key, request);
    };
  }
  return counted;
}
