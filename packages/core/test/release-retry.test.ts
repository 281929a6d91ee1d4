import { expect, test } from 'vitest';
import { LockClient, type LockStore, LockStoreError, memoryStore } from '../src/index.js';

/** A memory store whose next `failures` releases (writes that free the record) fail like a network error. */
function flakyReleases(failures: number) {
  const inner = memoryStore();
  const state = { failuresLeft: failures, releaseWrites: 0 };
  const store: LockStore = {
    ...inner,
    write: async (key, record, condition) => {
      if (record.holder === null) {
        state.releaseWrites++;
        if (state.failuresLeft-- > 0) throw new LockStoreError('connection reset', { retryable: false });
      }
      return inner.write(key, record, condition);
    },
  };
  return { store, inner, state };
}

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 300 && !(await condition()); i++) await new Promise((r) => setTimeout(r, 20));
  expect(await condition()).toBe(true);
}

test('a release that fails is retried in the background until it lands, with its data', async () => {
  const { store, inner, state } = flakyReleases(2);
  const locks = new LockClient({ store, leaseMs: 60_000 });
  const lock = await locks.acquire('invoice:1');
  await expect(lock.release({ data: { paid: true } })).rejects.toThrow('connection reset');
  expect(lock.isHeld).toBe(true);

  await until(() => !lock.isHeld);
  expect(state.releaseWrites).toBe(3);
  const info = await new LockClient({ store: inner }).inspect('invoice:1');
  expect(info).toMatchObject({ state: 'free', fencingToken: 1, data: { paid: true } });
});

test('withLock whose function throws does not leak the lock when the release fails once', async () => {
  const { store, inner } = flakyReleases(1);
  const locks = new LockClient({ store, leaseMs: 60_000 });
  await expect(
    locks.withLock('report', () => {
      throw new Error('report failed');
    }),
  ).rejects.toThrow('report failed');
  const observer = new LockClient({ store: inner });
  await until(async () => (await observer.inspect('report')).state === 'free');
});

test('a renewal that lands while a failed release waits for its retry does not cancel the retry', async () => {
  const { store, inner } = flakyReleases(1);
  // Heartbeats far more often than the first release retry (100 ms).
  const locks = new LockClient({ store, leaseMs: 3000, heartbeatMs: 20 });
  const lock = await locks.acquire('nightly');
  await expect(lock.release()).rejects.toThrow('connection reset');
  await until(() => !lock.isHeld);
  expect(await new LockClient({ store: inner }).inspect('nightly')).toMatchObject({ state: 'free' });
});
