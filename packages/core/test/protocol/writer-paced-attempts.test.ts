import { expect, test } from 'vitest';
import type { LockStore } from '../../src/contract/lock-store.js';
import { LockStoreError } from '../../src/shared/errors.js';
import { ManualTime } from '../helpers/manual-time.js';
import { watchedStore, writerOn } from '../helpers/manual-writer.js';

// A waiting writer paced by its caller (a key's one poller for its local waiters): each
// attempt() is one try, answered with the token, the record that shows the key held, or the
// store's error; between tries the writer sends nothing of its own.

/** Writer 1 holding key "k" of `store`, and writer 2 paced by its caller, not tried yet. */
async function heldWithPacedWaiter(store: LockStore, time: ManualTime) {
  const holder = writerOn(store, time, 1);
  void holder.acquire();
  await time.advance(1);
  return { holder, waiter: writerOn(store, time, 2, { pacedByCaller: true }) };
}

test('on a fresh key, one try claims it with one request', async () => {
  const time = new ManualTime();
  const { store, state } = watchedStore();
  const writer = writerOn(store, time, 1, { pacedByCaller: true });
  const result = writer.attempt();
  await time.advance(1);
  expect(await result).toEqual({ token: 1 });
  expect(state.requests).toBe(1);
  await writer.release();
});

test('on a held key, a try answers with the record, and nothing is sent until the next try', async () => {
  const time = new ManualTime();
  const { store, state } = watchedStore();
  const { holder, waiter } = await heldWithPacedWaiter(store, time);
  const first = waiter.attempt();
  await time.advance(1);
  const seen = await first;
  expect('held' in seen && seen.held?.record.holder?.lockId).toBe('L1');
  const requests = state.requests;
  await time.advance(2_000); // the holder renews meanwhile; the waiter sends nothing
  expect(state.sent.filter((record) => record.writeId.startsWith('w2:'))).toHaveLength(1);
  expect(state.requests - requests).toBeLessThanOrEqual(1); // the holder's heartbeat at most
  await holder.release();
  const second = waiter.attempt();
  await time.advance(1);
  expect(await second).toEqual({ token: 2 });
  await waiter.release();
});

test('a try whose look fails, or whose claim the store refuses, is rejected with the store error', async () => {
  const time = new ManualTime();
  const inner = watchedStore();
  let failReads = false;
  const store = Object.assign(Object.create(inner.store) as LockStore, {
    async read(key: string) {
      if (failReads)
        throw new LockStoreError('connection refused', { retryable: true, reason: 'unavailable' });
      return inner.store.read(key);
    },
  });
  const { holder, waiter } = await heldWithPacedWaiter(store, time);
  void waiter.attempt();
  await time.advance(1); // it has seen the key held: its next try reads first
  failReads = true;
  const looked = waiter.attempt().catch((error: unknown) => error);
  await time.advance(1);
  expect(String(await looked)).toMatch(/connection refused/);
  failReads = false;
  await holder.release();
  inner.state.refuseWrites = true;
  const claimed = waiter.attempt().catch((error: unknown) => error);
  await time.advance(1);
  expect(await claimed).toBeInstanceOf(LockStoreError);
  inner.state.refuseWrites = false;
  const again = waiter.attempt();
  await time.advance(1);
  expect(await again).toEqual({ token: 2 });
  await waiter.release();
});

test('a try is rejected once its writer ended (its caller gave up)', async () => {
  const time = new ManualTime();
  const { store } = watchedStore();
  const { holder, waiter } = await heldWithPacedWaiter(store, time);
  void waiter.attempt();
  await time.advance(1);
  waiter.giveUp();
  await expect(waiter.attempt()).rejects.toThrow(/ended/);
  await holder.release();
});

test('a holder whose look at the record fails looks again only after verifyMs', async () => {
  const time = new ManualTime();
  const inner = watchedStore();
  let reads = 0;
  let failReads = false;
  const store = Object.assign(Object.create(inner.store) as LockStore, {
    async read(key: string) {
      reads++;
      if (failReads)
        throw new LockStoreError('connection refused', { retryable: true, reason: 'unavailable' });
      return inner.store.read(key);
    },
  });
  const writer = writerOn(store, time, 1, { terms: { leaseMs: null, verifyMs: 1_000 } });
  void writer.acquire();
  await time.advance(1);
  failReads = true;
  await time.advance(5_000);
  expect(reads).toBeLessThanOrEqual(6);
  expect(writer.signal.aborted).toBe(false); // a failed look proves nothing
  failReads = false;
  await writer.release();
});

test('a try under way when its caller gives up is answered at once, not when the store answers; what it wins is given back', async () => {
  const time = new ManualTime();
  const { store, state, releaseWrites } = watchedStore();
  state.holdWrites = true;
  const writer = writerOn(store, time, 1, { pacedByCaller: true });
  let tried: unknown;
  void writer.attempt().then(
    (result) => (tried = result),
    (error: unknown) => (tried = error),
  );
  await time.advance(1);
  writer.giveUp(); // its claim is still on its way (a store that does not answer, a partition)
  await time.advance(1);
  expect(tried).toEqual({ held: null }); // no token: nothing for the caller
  releaseWrites(); // the claim lands, and is given back
  await time.advance(1);
  expect((await store.read('k'))!.record.holder).toBeNull();
  expect(await writer.ended).toBe('released');
});
