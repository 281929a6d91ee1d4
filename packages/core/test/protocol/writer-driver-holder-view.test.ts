import { expect, test } from 'vitest';
import type { LockLostError } from '../../src/shared/errors.js';
import type { Scheduler } from '../../src/shared/scheduler.js';
import { ManualTime } from '../helpers/manual-time.js';
import { watchedStore, writerOn } from '../helpers/manual-writer.js';

// What a holder's driver offers the code above it: a call for each renewal that landed, a check
// of the clocks on demand (a paused process learns at its first look, before its timers run),
// and the record as its lease last saw it.

/** A holder renewed every second that counts the renewals it is told of. */
function renewedEverySecond(time: ManualTime) {
  const { store } = watchedStore();
  const renewals = { count: 0 };
  const writer = writerOn(store, time, 1, {
    terms: { renewEveryMs: 1_000 },
    onRenewed: () => {
      renewals.count++;
    },
  });
  return { writer, renewals };
}

test('onRenewed is called for each heartbeat that landed, and for an extend', async () => {
  const time = new ManualTime();
  const { writer, renewals } = renewedEverySecond(time);
  void writer.acquire();
  await time.advance(3_000);
  expect(renewals.count).toBe(3);
  await writer.extend(20_000);
  expect(renewals.count).toBe(4);
  await writer.release();
});

test('check() ends a lease whose deadline passed while timers had not run yet (a paused process)', async () => {
  const time = new ManualTime();
  const base = time.scheduler();
  let paused = 0;
  // Both clocks move on by `paused` at once, as after a pause the event loop has not caught up with.
  const scheduler: Scheduler = {
    ...base,
    now: () => base.now() + paused,
    monotonic: () => base.monotonic() + paused,
  };
  const { store } = watchedStore();
  const writer = writerOn(store, time, 1, { scheduler });
  void writer.acquire();
  await time.advance(1);
  writer.check();
  expect(writer.signal.aborted).toBe(false);
  paused = 9_500; // past the deadline (9 s: the lease less its margin), not yet past the stored expiry
  writer.check();
  expect(writer.signal.aborted).toBe(true);
  expect((writer.signal.reason as LockLostError).reason).toBe('expired');
});

test('check() called over and over does not put off the renewal', async () => {
  const time = new ManualTime();
  const { writer, renewals } = renewedEverySecond(time);
  void writer.acquire();
  await time.advance(900);
  for (let ms = 0; ms < 200; ms++) {
    writer.check();
    await time.advance(1);
  }
  expect(renewals.count).toBe(1);
  await writer.release();
});

test('record is the record as the lease last saw it: its holder, and data an update stored', async () => {
  const time = new ManualTime();
  const { store } = watchedStore();
  const writer = writerOn(store, time, 1);
  expect(writer.record).toBeUndefined();
  void writer.acquire();
  await time.advance(1);
  expect(writer.record?.holder?.lockId).toBe('L1');
  await writer.extend(10_000, { step: 2 });
  expect(writer.record?.data).toEqual({ step: 2 });
  await writer.release();
});
