import { expect, test } from 'vitest';
import { ManualTime } from '../helpers/manual-time.js';
import { watchedStore, writerOn } from '../helpers/manual-writer.js';

// A release that keeps the lock a while (lockAtLeastMs): the lease is shortened and left to run
// out, so that another client cannot take the key before then.

test('a release with holdMs shortens the lease, stores its data, and renews no more; the key is free once it runs out', async () => {
  const time = new ManualTime();
  const { store, state } = watchedStore();
  const holder = writerOn(store, time, 1);
  void holder.acquire();
  await time.advance(1_000);
  const released = holder.release({ done: true }, 2_000);
  await time.advance(1);
  await released;
  expect(await holder.ended).toBe('released');
  const { record } = (await store.read('k'))!;
  expect(record.holder?.lockId).toBe('L1'); // still held: by the lease it shortened
  expect(record.holder?.leaseMs).toBe(2_000);
  expect(record.holder?.expiresAt).toBe(time.scheduler().now() - 1 + 2_000);
  expect(record.data).toEqual({ done: true });
  const writes = state.sent.length;
  const next = writerOn(store, time, 2);
  let acquiredAt: number | undefined;
  void next.acquire().then(() => {
    acquiredAt = time.elapsed;
  });
  await time.advance(1_900);
  expect(acquiredAt).toBeUndefined();
  await time.advance(200);
  expect(acquiredAt).toBeGreaterThanOrEqual(3_000);
  // Nothing of the first holder was written after its release: only the next writer's claim.
  expect(state.sent.slice(writes).every((sent) => sent.writeId.startsWith('w2:'))).toBe(true);
});

test('a release with holdMs that the store refuses leaves the lease held as before', async () => {
  const time = new ManualTime();
  const { store, state } = watchedStore();
  const holder = writerOn(store, time, 1);
  void holder.acquire();
  await time.advance(1_000);
  state.refuseNext = 1;
  await expect(holder.release(undefined, 2_000)).rejects.toThrow(/connection refused/); // the store's own error
  expect(holder.state.goal.kind).toBe('hold');
  expect((await store.read('k'))!.record.holder?.leaseMs).toBe(10_000);
  await holder.release();
  expect((await store.read('k'))!.record.holder).toBeNull();
});
