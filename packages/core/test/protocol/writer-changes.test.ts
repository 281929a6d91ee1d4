import { expect, test } from 'vitest';
import type { WriterEvent } from '../../src/protocol/writer-events.js';
import { newWriter } from '../../src/protocol/writer-state.js';
import { step } from '../../src/protocol/writer-step.js';
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

test('a heartbeat in flight never answers an extend: refused, the extend is still sent, and its own write answers it', async () => {
  const { time, writer, state, releaseWrites } = await holding();
  state.holdWrites = true;
  await time.advance(4_600); // the heartbeat is sent, and held
  const heartbeat = writer.state.pending?.intent;
  expect(heartbeat?.kind === 'renew' && heartbeat.data === undefined).toBe(true);
  const extended = settled(writer.extend(10_000));
  state.refuseNext = 1;
  releaseWrites(); // the heartbeat is refused
  await time.advance(1);
  expect(await extended).toBeUndefined();
  expect(state.sent).toHaveLength(3); // the claim, the heartbeat, the extend
});

test('a heartbeat that lands never answers an extend asked while it was in flight', async () => {
  const { time, writer, state, releaseWrites } = await holding();
  state.holdWrites = true;
  await time.advance(4_600);
  let answered = false;
  const extended = writer.extend(10_000).then(() => {
    answered = true;
  });
  state.holdWrites = true;
  releaseWrites(); // the heartbeat lands; the extend's write is sent next
  state.holdWrites = true;
  await time.advance(1);
  expect(state.sent).toHaveLength(3);
  expect(answered).toBe(false);
  releaseWrites();
  await time.advance(1);
  await extended;
});

test('no local pass while an update of the caller is queued or under way', async () => {
  const { time, writer, state, releaseWrites } = await holding();
  state.holdWrites = true;
  const update = writer.extend(10_000, 'mine');
  expect(writer.passLocally(10_000)).toBeUndefined();
  releaseWrites();
  await time.advance(1);
  await update;
});

test('a release while a change is under way answers the change: lost, maybe applied when its write is in flight', () => {
  const terms = { leaseMs: 10_000, claimBy: 'version', marginMs: 1_000, retryMs: 50 } as const;
  let s = newWriter('w', terms);
  const feed = (event: WriterEvent) => {
    const next = step(s, event);
    s = next.state;
    return next.actions;
  };
  feed({ type: 'start', now: 0 });
  feed({ type: 'written', seq: 1, answer: { kind: 'ok', version: 'v1', token: 1, top: 1 }, now: 1 });
  feed({ type: 'extend', leaseMs: 10_000, data: '"x"', now: 2 }); // its write is sent at once
  const actions = feed({ type: 'release', data: undefined, now: 3 });
  expect(actions).toContainEqual({ type: 'failed', op: 'extend', why: 'lost', maybeApplied: true });
});

test('a heartbeat the store refused is sent again after the retry time, not at once', async () => {
  const { time, writer, state } = await holding();
  state.refuseWrites = true;
  await time.advance(4_600); // the heartbeat is due, and refused
  const refusedAt = state.sent.length;
  await time.advance(100); // two retry times (50 ms each)
  expect(state.sent.length - refusedAt).toBeLessThanOrEqual(2);
  expect(state.sent.length - refusedAt).toBeGreaterThanOrEqual(1);
  expect(writer.state.lease).not.toBeNull(); // refused for certain: the lease stands until its deadline
});
