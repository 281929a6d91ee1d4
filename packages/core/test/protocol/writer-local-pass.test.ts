import { expect, test } from 'vitest';
import type { LockStore } from '../../src/contract/lock-store.js';
import { ManualTime } from '../helpers/manual-time.js';
import { watchedStore, writerOn } from '../helpers/manual-writer.js';

// A local pass: a lease moves to another caller of the same client with no request, on a token
// reserved by the written hand-over before it, and the next write stores that caller.

/** Writer 2 holds the key, handed over to it by writer 1 in one write (which reserves tokens). */
async function handedOver(store: LockStore, time: ManualTime, marginMs?: number) {
  const first = writerOn(store, time, 1, { marginMs });
  const second = writerOn(store, time, 2, { marginMs });
  void first.acquire();
  await time.advance(1);
  const waiting = second.acquire();
  await time.advance(60); // the waiter looked, and found the key held
  void first.handOver(second);
  await time.advance(1);
  return { second, token: await waiting };
}

test('after a written hand-over, callers pass the lease on with no request, each on the next token, and the renewal stores the last', async () => {
  const time = new ManualTime();
  const { store, state } = watchedStore();
  const { second, token } = await handedOver(store, time);
  const before = state.requests;
  expect(second.passLocally(10_000, 'caller 3')).toBe(token + 1);
  await time.advance(100);
  const passedAt = time.scheduler().now();
  expect(second.passLocally(10_000, 'caller 4')).toBe(token + 2);
  expect(state.requests).toBe(before);

  await time.advance(5_000); // past the renewal, halfway through what is left of the lease
  const record = (await store.read('k'))!.record;
  expect(state.requests).toBeGreaterThan(before);
  expect(record.holder).toMatchObject({
    lockId: 'L2',
    token: token + 2,
    context: 'caller 4',
    acquiredAt: passedAt,
  });
  expect(record.token).toBeGreaterThan(token + 2); // still reserved ahead
  await second.release();
  expect(await second.ended).toBe('released');
});

test('no pass without a reserved token: right after a claim, the holder is on the record’s token', async () => {
  const time = new ManualTime();
  const { store } = watchedStore();
  const only = writerOn(store, time, 1);
  void only.acquire();
  await time.advance(1);
  expect(only.state.lease).not.toBeNull();
  expect(only.passLocally(10_000)).toBeUndefined();
});

test('no pass for a semaphore slot, though the record’s token is above its own (another holder’s)', async () => {
  const time = new ManualTime();
  const { store } = watchedStore();
  const [a, b] = [1, 2].map((n) => writerOn(store, time, n, { limit: 2 }));
  void a!.acquire();
  await time.advance(1);
  void b!.acquire();
  await time.advance(1);
  await time.advance(5_000); // a's renewal learns the record's token, b's
  expect(a!.state.lease?.top).toBeGreaterThan(a!.state.lease!.token);
  expect(a!.passLocally(10_000)).toBeUndefined();
});

test('no pass while a write is in flight: its outcome decides the lease first', async () => {
  const time = new ManualTime();
  const { store, state, releaseWrites } = watchedStore();
  const { second, token } = await handedOver(store, time);
  state.holdWrites = true;
  await time.advance(4_600); // the renewal is sent (halfway through the 9 s trusted), and held
  expect(second.state.pending?.intent.kind).toBe('renew');
  expect(second.passLocally(10_000)).toBeUndefined();
  releaseWrites();
  await time.advance(1);
  expect(second.state.pending).toBeNull();
  expect(second.passLocally(10_000)).toBe(token + 1);
});

test('no pass with a third of the lease left or less: the next caller would start with almost none', async () => {
  const time = new ManualTime();
  const { store } = watchedStore();
  // The widest margin, half the lease: trusted for 5 s of its 10, and renewed 2.5 s in.
  const { second, token } = await handedOver(store, time, 5_000);
  expect(second.passLocally(10_000)).toBe(token + 1); // 5 s left
  await time.advance(1_700); // 3.3 s left
  expect(second.state.pending).toBeNull();
  expect(second.passLocally(10_000)).toBeUndefined();
});

test('no pass to a caller asking for another lease length; after an extend, the new length passes', async () => {
  const time = new ManualTime();
  const { store } = watchedStore();
  const { second, token } = await handedOver(store, time);
  expect(second.passLocally(20_000)).toBeUndefined();
  const extended = second.extend(20_000);
  await time.advance(1);
  await extended;
  expect(second.passLocally(10_000)).toBeUndefined();
  expect(second.passLocally(20_000)).toBe(token + 1);
});

test('a waiter handed the lease while its own claim is still on its way arms its deadline: its signal aborts when the lease ends', async () => {
  const time = new ManualTime();
  const { store: watched } = watchedStore();
  // The waiter's claim never gets an answer; every other write goes through.
  const store: LockStore = Object.assign(Object.create(watched) as LockStore, {
    write(...args: Parameters<LockStore['write']>) {
      if (args[1].writeId?.startsWith('w2:')) return new Promise(() => undefined);
      return watched.write(...args);
    },
  });
  const first = writerOn(store, time, 1);
  const second = writerOn(store, time, 2);
  void first.acquire();
  const waiting = second.acquire(); // both see the key free: the second claim stays on its way
  await time.advance(1);
  void first.handOver(second);
  await time.advance(1);
  expect(typeof (await waiting)).toBe('number');
  expect(second.signal.aborted).toBe(false);
  await time.advance(10_000); // the 10 s lease (trusted for 9 s) is over; nothing else happened
  expect(second.signal.aborted).toBe(true);
});
