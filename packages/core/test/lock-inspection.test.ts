// The typed seam through which the simulator's checks (and tests) read a lock's own state. If it
// stopped telling the truth, a check reading it would go blind: these pin what it reports.
import { expect, test } from 'vitest';
import { inspectLock } from '../src/client/lock.js';
import { LockClient, LockLostError, type LockStore, LockStoreError, memoryStore } from '../src/index.js';

/** A memory store whose next `failures` releases fail like a network error (certainly not applied). */
function flakyReleases(failures: number): LockStore {
  const inner = memoryStore();
  let left = failures;
  return {
    ...inner,
    write: async (key, record, condition) => {
      if (record.holder === null && left-- > 0) {
        throw new LockStoreError('connection reset', { retryable: false });
      }
      return inner.write(key, record, condition);
    },
  };
}

test('a held lock is held, with the lease and heartbeat it keeps, and extend changes them', async () => {
  const locks = new LockClient({ store: memoryStore(), leaseMs: 60_000, heartbeatMs: 20_000 });
  const lock = await locks.acquire('invoice:1');
  expect(inspectLock(lock)).toEqual({
    phase: 'held',
    releasePending: false,
    leaseMs: 60_000,
    heartbeatMs: 20_000,
  });
  await lock.extend(90_000);
  expect(inspectLock(lock)).toMatchObject({ phase: 'held', leaseMs: 90_000 });
  await lock.release();
  expect(inspectLock(lock)).toMatchObject({ phase: 'released', releasePending: false });
  await locks.close();
});

test('a fail-closed lock keeps an endless lease and no heartbeat', async () => {
  const locks = new LockClient({ store: memoryStore(), leaseMs: Number.POSITIVE_INFINITY });
  const lock = await locks.acquire('migration');
  expect(inspectLock(lock)).toMatchObject({
    phase: 'held',
    leaseMs: Number.POSITIVE_INFINITY,
    heartbeatMs: false,
  });
  await lock.release();
  await locks.close();
});

test('a release that failed is pending while the lock is still ours; one that lands ends it', async () => {
  const locks = new LockClient({ store: flakyReleases(1), leaseMs: 60_000 });
  const lock = await locks.acquire('report');
  await expect(lock.release()).rejects.toThrow('connection reset');
  expect(inspectLock(lock)).toMatchObject({ phase: 'held', releasePending: true });
  await lock.release();
  expect(inspectLock(lock)).toMatchObject({ phase: 'released', releasePending: false });
  await locks.close();
});

test('a lock taken away is lost once it learns so', async () => {
  const store = memoryStore();
  const locks = new LockClient({ store, leaseMs: 60_000 });
  const operator = new LockClient({ store });
  const lock = await locks.acquire('nightly');
  await operator.forceRelease('nightly');
  await expect(lock.update({ step: 2 })).rejects.toBeInstanceOf(LockLostError);
  expect(inspectLock(lock)).toMatchObject({ phase: 'lost', releasePending: false });
  await locks.close();
  await operator.close();
});
