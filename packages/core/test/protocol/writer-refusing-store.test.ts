import { expect, test } from 'vitest';
import { ManualTime } from '../helpers/manual-time.js';
import { watchedStore, writerOn } from '../helpers/manual-writer.js';

// A store that refuses every write for a while (an outage, throttling): a writer claiming, or
// giving back what it owns, tries again at its retry pace, never in a tight loop, and goes on
// once the store answers again.

test('claims refused by the store are tried again every retryMs, and the writer acquires once it accepts', async () => {
  const time = new ManualTime();
  const { store, state } = watchedStore();
  state.refuseWrites = true;
  const writer = writerOn(store, time, 1); // retryMs 50
  let acquired = false;
  void writer.acquire().then(() => {
    acquired = true;
  });
  await time.advance(1_000);
  // One claim, then one every 50 ms: about 20 in a second, not thousands.
  expect(state.sent.length).toBeGreaterThanOrEqual(15);
  expect(state.sent.length).toBeLessThanOrEqual(25);
  expect(acquired).toBe(false);
  state.refuseWrites = false;
  await time.advance(100);
  expect(acquired).toBe(true);
  await writer.release();
});

test('a holder that gives up while the store refuses gives the key back at its retry pace once it accepts', async () => {
  const time = new ManualTime();
  const { store, state } = watchedStore();
  const writer = writerOn(store, time, 1);
  void writer.acquire();
  await time.advance(1);
  state.refuseWrites = true;
  writer.giveUp();
  const before = state.sent.length;
  await time.advance(1_000);
  expect(state.sent.length - before).toBeLessThanOrEqual(25);
  state.refuseWrites = false;
  await time.advance(100);
  expect(await writer.ended).toBe('released'); // what it held, it gave back
  expect((await store.read('k'))!.record.holder).toBeNull();
});
