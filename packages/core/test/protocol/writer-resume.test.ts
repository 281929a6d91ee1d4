import { expect, test } from 'vitest';
import { LockNotHeldError, LockStoreError } from '../../src/shared/errors.js';
import { ManualTime } from '../helpers/manual-time.js';
import { watchedStore, writerOn } from '../helpers/manual-writer.js';

// A resume through the writer machine: a new writer (another process) takes over an acquisition
// by its handle, renewing its entry before its caller gets it, so that the old process's writes
// can no longer land; it never claims afresh.

const settled = <T>(promise: Promise<T>): Promise<T | unknown> => promise.catch((error: unknown) => error);

/** Writer 1 holds the key; writer 2 is the same acquisition (lock id L1) in another process. */
async function heldElsewhere() {
  const time = new ManualTime();
  const watched = watchedStore();
  const original = writerOn(watched.store, time, 1);
  const token = await Promise.all([original.acquire(), time.advance(1)]).then(([value]) => value);
  const resumer = writerOn(watched.store, time, 2, { lockId: 'L1' });
  return { time, original, resumer, token, ...watched };
}

test('a resume renews the entry first and holds on the acquisition’s token; the old process’s next write fails', async () => {
  const { time, original, resumer, token, store, state } = await heldElsewhere();
  const current = (await store.read('k'))!;
  const before = state.sent.length;
  const resumed = resumer.resume(current);
  await time.advance(1);
  expect(await resumed).toBe(token);
  expect(state.sent.length).toBe(before + 1); // the renewal
  expect((await store.read('k'))!.record.writeId).toBe('w2:1');
  const oldRelease = settled(original.release('stale'));
  await time.advance(1);
  expect(await oldRelease).toBeInstanceOf(Error);
  expect((await store.read('k'))!.record.holder?.lockId).toBe('L1');
  await resumer.release('done');
  expect((await store.read('k'))!.record.data).toBe('done');
});

test('a resume of an acquisition that moved on ends: LockNotHeldError, and nothing is written', async () => {
  const { time, original, resumer, store, state } = await heldElsewhere();
  const stale = (await store.read('k'))!;
  await original.release(); // the record moves on
  await time.advance(1);
  const before = state.sent.length;
  const resumed = settled(resumer.resume(stale));
  await time.advance(10);
  expect(await resumed).toBeInstanceOf(LockNotHeldError);
  expect(state.sent.length).toBe(before + 1); // the renewal, refused by its condition
  expect(resumer.state.end).toBe('lost');
  expect((await store.read('k'))!.record.holder).toBeNull(); // not claimed afresh
});

test('a resume whose record moved on with the acquisition still in it (its old process renewed) takes it over on the new version', async () => {
  const { time, original, resumer, token, store } = await heldElsewhere();
  const stale = (await store.read('k'))!;
  await original.extend(10_000); // the old process renews: same entry, new version
  const resumed = resumer.resume(stale);
  await time.advance(10);
  expect(await resumed).toBe(token);
  expect((await store.read('k'))!.record.writeId).toMatch(/^w2:/);
  await resumer.release();
});

test('a resume whose renewal the store refused for certain rejects with the store’s error', async () => {
  const { time, resumer, store, state } = await heldElsewhere();
  state.refuseWrites = true;
  const resumed = settled(resumer.resume((await store.read('k'))!));
  await time.advance(10);
  expect(await resumed).toBeInstanceOf(LockStoreError);
  expect(resumer.state.end).toBe('lost');
});

test('a resume of a record with no entry of the acquisition is refused before any write', async () => {
  const { store, state } = await heldElsewhere();
  const current = (await store.read('k'))!;
  const other = writerOn(store, new ManualTime(), 3, { lockId: 'L9' });
  const before = state.sent.length;
  await expect(other.resume(current)).rejects.toBeInstanceOf(LockNotHeldError);
  expect(state.sent.length).toBe(before);
});
