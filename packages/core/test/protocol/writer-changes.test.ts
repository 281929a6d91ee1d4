import { expect, test } from 'vitest';
import { LockLostError, LockStoreError } from '../../src/shared/errors.js';
import { ManualTime } from '../helpers/manual-time.js';
import { watchedStore, writerOn } from '../helpers/manual-writer.js';

// A holder's changes through the writer machine: an update (a renewal that stores data), an
// extend (a renewal for another lease length), one at a time, each answered by its own write.

const settled = <T>(promise: Promise<T>): Promise<T | unknown> => promise.catch((error: unknown) => error);

async function holding() {
  const time = new ManualTime();
  const watched = watchedStore();
  const writer = writerOn(watched.store, time, 1);
  void writer.acquire();
  await time.advance(1);
  expect(writer.state.lease).not.toBeNull();
  return { time, writer, ...watched };
}

test('an update stores its data in a renewal, and the lease runs from that renewal', async () => {
  const { time, writer, store } = await holding();
  const deadlineBefore = writer.state.lease!.deadline;
  await time.advance(1_000);
  const updated = writer.extend(10_000, { step: 1 });
  await time.advance(1);
  await updated;
  const record = (await store.read('k'))!.record;
  expect(record.data).toEqual({ step: 1 });
  expect(record.holder?.renewedAt).toBe(time.scheduler().now() - 1);
  expect(writer.state.lease!.deadline).toBeGreaterThan(deadlineBefore);
  await writer.release();
  expect((await store.read('k'))!.record.data).toEqual({ step: 1 }); // a release without data keeps it
});

test('an extend writes the new lease length, fail-closed included', async () => {
  const { time, writer, store } = await holding();
  const extended = writer.extend(60_000);
  await time.advance(1);
  await extended;
  expect((await store.read('k'))!.record.holder).toMatchObject({ leaseMs: 60_000 });
  const closed = writer.extend(null);
  await time.advance(1);
  await closed;
  expect((await store.read('k'))!.record.holder).toMatchObject({ leaseMs: null, expiresAt: null });
  expect(writer.state.lease!.deadline).toBe(Number.POSITIVE_INFINITY);
});

test('a second update waits for the first: its write is sent only once the first landed, and stays', async () => {
  const { time, writer, store, state, releaseWrites } = await holding();
  state.holdWrites = true;
  const first = writer.extend(10_000, 'first');
  const second = writer.extend(10_000, 'second');
  let sentWhenFirstLanded: unknown[] = [];
  void first.then(() => {
    sentWhenFirstLanded = state.sent.map((record) => record.data);
  });
  await time.advance(1);
  expect(state.sent.map((record) => record.data)).toEqual([undefined, 'first']); // the claim, the first update
  releaseWrites();
  await time.advance(1);
  await Promise.all([first, second]);
  expect(sentWhenFirstLanded).toEqual([undefined, 'first']);
  expect(state.sent.map((record) => record.data)).toEqual([undefined, 'first', 'second']);
  expect((await store.read('k'))!.record.data).toBe('second');
});

test('an update the store refused for certain rejects with its error, and the lease stands as it was', async () => {
  const { time, writer, store, state } = await holding();
  const deadline = writer.state.lease!.deadline;
  state.refuseWrites = true;
  const refused = settled(writer.extend(10_000, 'refused'));
  await time.advance(1);
  expect(await refused).toBeInstanceOf(LockStoreError);
  expect(writer.state.goal.kind).toBe('hold');
  expect(writer.state.lease!.deadline).toBe(deadline);
  expect((await store.read('k'))!.record.data).toBeUndefined();
});

test('a lease that ends while the update is in flight rejects it as lost, maybe applied', async () => {
  const { time, writer, state } = await holding();
  state.holdWrites = true;
  const update = settled(writer.extend(10_000, 'late'));
  await time.advance(9_500); // past the trusted 9 s, the update's write still held
  const error = await update;
  expect(error).toBeInstanceOf(LockLostError);
  expect((error as LockLostError).maybeApplied).toBe(true);
  expect(writer.signal.aborted).toBe(true);
});
