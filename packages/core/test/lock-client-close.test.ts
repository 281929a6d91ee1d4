import { expect, test } from 'vitest';
import {
  fencingTokenOfHandle,
  keyOfHandle,
  LockClient,
  type LockStore,
  LockStoreError,
  LockTimeoutError,
  memoryStore,
} from '../src/index.js';
import { scriptedClients } from './helpers/scripted-clients.js';

/** A memory store whose writes wait until `open()` is called, to hold a claim in flight. */
function gatedStore() {
  const inner = memoryStore();
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const store: LockStore = {
    ...inner,
    write: async (...args) => {
      await gate;
      return inner.write(...args);
    },
  };
  return { inner, store, open };
}

test('close() waits for a claim that lands after its caller gave up, and frees that lock', async () => {
  const { inner, store, open } = gatedStore();
  const locks = new LockClient({ store });
  const abort = new AbortController();
  const acquiring = locks.acquire('deploy', { signal: abort.signal });
  abort.abort(new Error('gave up'));
  await expect(acquiring).rejects.toThrow('gave up');

  let closed = false;
  const closing = locks.close().then(() => {
    closed = true;
  });
  await new Promise((r) => setTimeout(r, 50));
  expect(closed).toBe(false); // the claim is still in flight
  open();
  await closing;
  const info = await new LockClient({ store: inner }).inspect('deploy');
  expect(info).toMatchObject({ state: 'free', fencingToken: 1 });
});

test.each([
  ['tryAcquire', (locks: LockClient) => locks.tryAcquire('deploy')],
  ['acquire', (locks: LockClient) => locks.acquire('deploy', { waitMs: 0 })],
  ['acquireAll', (locks: LockClient) => locks.acquireAll(['deploy', 'migrate'], { waitMs: 0 })],
])(
  '%s: a claim that lands once close() began hands out no lock, and the key is free after',
  async (_name, call) => {
    const { inner, store, open } = gatedStore();
    const locks = new LockClient({ store });
    const trying = call(locks).then(
      () => 'handed out',
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 5)); // the claim is on its way
    const closing = locks.close();
    open();
    const outcome = await trying;
    expect(outcome).toBeInstanceOf(LockStoreError);
    expect((outcome as LockStoreError).code).toBe('LOCK_CLIENT_CLOSED');
    await closing;
    expect((await inner.read('deploy'))?.record.holder ?? null).toBeNull();
  },
);

test('close() rejects waiting acquires, releases held locks, and refuses new work', async () => {
  const store = memoryStore();
  const other = new LockClient({ store });
  const held = await other.acquire('report');
  const locks = new LockClient({ store, pollMs: 20 });
  const mine = await locks.acquire('invoice:1');
  const waiting = locks.acquire('report').catch((error: unknown) => error);

  await locks.close();
  expect(await waiting).toMatchObject({ code: 'LOCK_CLIENT_CLOSED' });
  expect(mine.isHeld).toBe(false);
  expect((await other.inspect('invoice:1')).state).toBe('free');
  expect(locks.closed).toBe(true);
  await expect(locks.acquire('x')).rejects.toBeInstanceOf(LockStoreError);
  await expect(locks.tryAcquire('x')).rejects.toMatchObject({ code: 'LOCK_CLIENT_CLOSED' });
  // A handle from elsewhere is refused too: a resumed lock would be renewed with nobody to release it.
  const elsewhere = await other.acquire('handed-over');
  await expect(locks.resume(elsewhere.handle)).rejects.toMatchObject({ code: 'LOCK_CLIENT_CLOSED' });
  expect(await other.inspect('handed-over')).toMatchObject({ state: 'held', owner: other.owner });
  await elsewhere.release();
  expect(locks.close()).toBe(locks.close());
  await held.release();
});

test('a campaign ends when its client is closed', async () => {
  const store = memoryStore();
  const blocker = await new LockClient({ store }).acquire('leader');
  const locks = new LockClient({ store, pollMs: 20 });
  const campaign = locks.campaign('leader', { onElected: () => undefined });
  await new Promise((r) => setTimeout(r, 50));
  await locks.close();
  await campaign.stop();
  expect(campaign.isLeader).toBe(false);
  await blocker.release();
});

test('a wait that times out while the store keeps failing says so in its cause', async () => {
  const inner = memoryStore();
  const failing: LockStore = {
    ...inner,
    read: async () => {
      throw new LockStoreError('connection refused', { retryable: true });
    },
    write: async () => {
      throw new LockStoreError('connection refused', { retryable: true });
    },
  };
  const locks = new LockClient({ store: failing, retry: { attempts: 1, baseMs: 5, maxMs: 10 } });
  const error = await locks.acquire('k', { waitMs: 200 }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(LockTimeoutError);
  expect((error as Error).cause).toBeInstanceOf(LockStoreError);
  expect((error as Error).message).toContain('the store kept failing: connection refused');
});

test('a lock tells when it was acquired, and a handle tells its key and fencing token', async () => {
  const locks = new LockClient({ store: memoryStore() });
  const before = Date.now();
  const lock = await locks.acquire('pipeline/deploy');
  expect(lock.acquiredAt).toBeGreaterThanOrEqual(before);
  expect(lock.acquiredAt).toBeLessThanOrEqual(Date.now());
  expect(keyOfHandle(lock.handle)).toBe('pipeline/deploy');
  expect(() => keyOfHandle('nope')).toThrow(/Not a lock handle/);
  expect(fencingTokenOfHandle(lock.handle)).toBe(lock.fencingToken);
  expect(() => fencingTokenOfHandle('latch1.!!')).toThrow(/Malformed lock handle/);
  await lock.release();
});

test('close() does not wait for the store to answer a waiter whose claim is unresolved: it gives it up and says unsettled', async () => {
  const s = scriptedClients();
  const unsettled: string[] = [];
  const locks = s.client({ onEvent: (event) => event.type === 'unsettled' && unsettled.push(event.key) });
  s.scripted.nextWrite({ kind: 'lose-answer' }); // the claim may have landed
  s.scripted.nextReadArrivesLate(60_000); // and the look that would tell hangs for a minute
  const waiting = locks.acquire('k').catch((error: unknown) => error);
  await s.time.advance(1);
  let closed = false;
  const closing = locks.close().then(() => {
    closed = true;
  });
  expect(await waiting).toBeInstanceOf(LockStoreError); // LOCK_CLIENT_CLOSED
  await s.time.advance(5_000);
  expect(closed).toBe(true);
  expect(unsettled).toEqual(['k']);
  await s.time.advance(60_000);
  await closing;
});
