import { expect, test } from 'vitest';
import { LockClient, LockConfigError, LockStoreError, LockTimeoutError } from '../src/index.js';
import { failingStore } from './helpers/failing-store.js';

/** A memory store that fails every request like a store that is down, while `down` is true. */
function switchableStore() {
  const failing = failingStore(() =>
    state.down ? new LockStoreError('connection refused', { retryable: true }) : undefined,
  );
  const state = Object.assign(failing.state, { down: true });
  return { store: failing.store, state };
}

const noRetry = { attempts: 1, baseMs: 1, maxMs: 1 };

test('failFastOnStoreError: a store that is down rejects a waiting acquire at once with its LockStoreError', async () => {
  const { store } = switchableStore();
  const locks = new LockClient({ store, retry: noRetry, pollMs: 20 });
  const error = await locks
    .acquire('invoice:1', { waitMs: 60_000, failFastOnStoreError: true })
    .catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(LockStoreError);
  expect((error as Error).message).toMatch(/connection refused/);
});

test('without it, a waiting acquire keeps retrying the store and ends in a timeout that names the cause', async () => {
  const { store, state } = switchableStore();
  const locks = new LockClient({ store, retry: noRetry, pollMs: 20 });
  const error = await locks.acquire('invoice:2', { waitMs: 300 }).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(LockTimeoutError);
  expect((error as LockTimeoutError).cause).toBeInstanceOf(LockStoreError);
  expect(state.requests).toBeGreaterThan(1);
});

test('failFastOnStoreError still waits for a lock that is held, and store errors met while waiting are retried', async () => {
  const { store, state } = switchableStore();
  state.down = false;
  const holderClient = new LockClient({ store, retry: noRetry });
  const holder = await holderClient.acquire('invoice:3');
  let markWaiting: () => void = () => {};
  const isWaiting = new Promise<void>((resolve) => {
    markWaiting = resolve;
  });
  const locks = new LockClient({
    store,
    retry: noRetry,
    pollMs: 20,
    onEvent: (event) => {
      if (event.type === 'waiting') markWaiting();
    },
  });
  const waiting = locks.acquire('invoice:3', { waitMs: 60_000, failFastOnStoreError: true });
  // The first try found the key held; now the store fails for a while, then comes back.
  await isWaiting;
  state.down = true;
  await new Promise((resolve) => setTimeout(resolve, 100));
  state.down = false;
  await holder.release();
  const lock = await waiting;
  expect(lock.fencingToken).toBe(2);
  await lock.release();
});

test('failFastOnStoreError must be a boolean', async () => {
  const { store, state } = switchableStore();
  const locks = new LockClient({ store });
  await expect(locks.acquire('invoice:4', { failFastOnStoreError: 'yes' as never })).rejects.toThrow(
    LockConfigError,
  );
  expect(state.requests).toBe(0);
});
