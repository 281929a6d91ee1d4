import { expect, test } from 'vitest';
import { LockLostError } from '../../src/shared/errors.js';
import { ManualTime } from '../helpers/manual-time.js';
import { watchedStore, writerOn } from '../helpers/manual-writer.js';

// How often a holder renews (its caller's interval, or none), and how a holder whose lease
// nothing renews learns that the key was taken from it: by reading the record now and then.

/** The holder fields of the writes sent so far that renewed a lease. */
function renewals(sent: { writeId: string; holder: { renewedAt: number; acquiredAt: number } | null }[]) {
  return sent.filter((record) => record.holder && record.holder.renewedAt !== record.holder.acquiredAt);
}

test("a holder renews at its caller's interval, counted from the write that last confirmed the lease", async () => {
  const time = new ManualTime();
  const { store, state } = watchedStore();
  const writer = writerOn(store, time, 1, { terms: { renewEveryMs: 1_000 } });
  void writer.acquire();
  await time.advance(999);
  expect(renewals(state.sent)).toHaveLength(0);
  await time.advance(1);
  expect(renewals(state.sent)).toHaveLength(1);
  await time.advance(3_000);
  expect(renewals(state.sent)).toHaveLength(4);
  await writer.release();
});

test('without an interval, a holder renews halfway through what is left of its lease', async () => {
  const time = new ManualTime();
  const { store, state } = watchedStore();
  const writer = writerOn(store, time, 1); // 10 s lease, trusted for 9 s: renewed at 4.5 s
  void writer.acquire();
  await time.advance(4_499);
  expect(renewals(state.sent)).toHaveLength(0);
  await time.advance(1);
  expect(renewals(state.sent)).toHaveLength(1);
  await writer.release();
});

test('a fail-closed lease its caller makes finite renews every third of it, as its lock then reports', async () => {
  const time = new ManualTime();
  const { store, state } = watchedStore();
  const writer = writerOn(store, time, 1, { terms: { leaseMs: null, verifyMs: 100_000 } });
  void writer.acquire();
  await time.advance(1);
  await writer.extend(9_000); // renewed from here every 3 s (halfway would be at 4 s)
  const extended = renewals(state.sent).length;
  await time.advance(2_999);
  expect(renewals(state.sent)).toHaveLength(extended);
  await time.advance(1);
  expect(renewals(state.sent)).toHaveLength(extended + 1);
  await writer.release();
});

test('a finite lease its caller does not renew runs out: the caller hears it expired', async () => {
  const time = new ManualTime();
  const { store, state } = watchedStore();
  const writer = writerOn(store, time, 1, { terms: { renewEveryMs: false } });
  void writer.acquire();
  await time.advance(8_999);
  expect(writer.signal.aborted).toBe(false);
  await time.advance(1);
  expect(state.sent).toHaveLength(1); // the claim, and nothing since
  expect((writer.signal.reason as LockLostError).reason).toBe('expired');
});

test('a fail-closed holder reads the record every verifyMs, and hears the key was taken once a read shows it freed', async () => {
  const time = new ManualTime();
  const { store, state } = watchedStore();
  const writer = writerOn(store, time, 1, { terms: { leaseMs: null, verifyMs: 2_000 } });
  void writer.acquire();
  await time.advance(1);
  const requests = state.requests;
  await time.advance(2_000);
  expect(state.requests).toBe(requests + 1); // one read, which showed the lease still its own
  expect(writer.signal.aborted).toBe(false);
  // Another client frees the key (an operator's forceRelease), conditional on what it read.
  const current = (await store.read('k'))!;
  const { holder: _holder, ...rest } = current.record;
  await store.write('k', { ...rest, holder: null, writeId: 'operator' }, { version: current.version });
  await time.advance(1_998); // the last read was answered at 2,000: the next is due at 4,000
  expect(writer.signal.aborted).toBe(false); // it has not looked since
  await time.advance(1);
  expect(writer.signal.aborted).toBe(true);
  const error = writer.signal.reason as LockLostError;
  expect(error).toBeInstanceOf(LockLostError);
  expect(error.reason).toBe('taken');
  expect(await writer.ended).toBe('lost');
});

test('a semaphore slot nothing renews stays its own when other holders write beside it', async () => {
  const time = new ManualTime();
  const { store } = watchedStore();
  const terms = { leaseMs: null, verifyMs: 1_000 };
  const first = writerOn(store, time, 1, { limit: 2, terms });
  const second = writerOn(store, time, 2, { limit: 2, terms });
  void first.acquire();
  await time.advance(1);
  void second.acquire(); // a write beside the first slot: the record's version moves on
  await time.advance(3_000);
  expect(first.signal.aborted).toBe(false);
  await second.release();
  await time.advance(1_000);
  expect(first.signal.aborted).toBe(false);
  await first.release();
});
