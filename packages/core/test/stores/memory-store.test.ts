import { describeStoreContract, freeRecord } from '@latch/testing/conformance';
import { describe, expect, it } from 'vitest';
import * as latch from '../../src/index.js';
import { LockClient, LockConfigError, memoryStore } from '../../src/index.js';

describeStoreContract({
  latch,
  name: 'memory',
  list: true,
  claim: typeof memoryStore().claim === 'function',
  start: async () => {
    const store = memoryStore();
    return {
      store,
      maxKey: { length: 4096, unit: 'utf16-units' },
      async tamper(key, rawText) {
        store.documents.set(key, { version: `tampered-${key}`, text: rawText });
      },
    };
  },
});

describe('memoryStore().requestCount', () => {
  it('counts every read, write and delete sent to the store, and nothing else', async () => {
    const store = memoryStore();
    expect(store.requestCount).toBe(0);
    store.checkKey('a');
    store.recordBytes(freeRecord(1));
    expect(store.requestCount).toBe(0);

    const written = await store.write('a', freeRecord(1), { absent: true });
    await store.write('a', freeRecord(2), { absent: true }); // refused: still a request
    await store.read('a');
    if (!written.ok) throw new Error('the first write must succeed');
    await store.delete('a', written.version);
    expect(store.requestCount).toBe(4);
  });

  it('counts what a client costs, and shows a refused call sent nothing', async () => {
    const store = memoryStore();
    const locks = new LockClient({ store });
    await expect(locks.tryAcquire('report', { waitMS: 5 } as never)).rejects.toThrow(LockConfigError);
    expect(store.requestCount).toBe(0);

    // As on S3: a new key costs one write to acquire and one to release.
    const lock = await locks.acquire('report');
    expect(store.requestCount).toBe(1);
    await lock.release();
    expect(store.requestCount).toBe(2);
    await locks.inspect('report');
    expect(store.requestCount).toBe(3);
    await locks.close();
  });
});
