import { expect, test } from 'vitest';
import { type ClockMode, LockClient, memoryStore } from '../src/index.js';
import { ManualTime } from './helpers/manual-time.js';

// A semaphore slot nobody renews is taken by another client only once it has surely ended by
// that client's clock: past its stored expiry plus the tolerance (trusted clocks), or seen
// unchanged for its lease plus the tolerance (untrusted ones).

const TOLERANCE_MS = 500;

async function twoSlotsNobodyRenews(mode: ClockMode) {
  const time = new ManualTime();
  const store = memoryStore();
  const holder = new LockClient({
    store,
    leaseMs: 1_000,
    heartbeatMs: false,
    clock: { mode, time: time.scheduler() },
  });
  await holder.acquire('s', { limit: 2 });
  await holder.acquire('s', { limit: 2 });
  const other = new LockClient({
    store,
    leaseMs: 1_000,
    clock: { mode, toleranceMs: TOLERANCE_MS, time: time.scheduler() },
  });
  return { time, other };
}

test('trusted clocks: a slot whose expiry passed within the tolerance is not taken', async () => {
  const { time, other } = await twoSlotsNobodyRenews('trusted');
  await time.advance(1_300); // 300 ms past the expiry both slots stored
  expect(await other.tryAcquire('s', { limit: 2 })).toBeNull();
  await time.advance(300); // 600 ms past it: beyond the tolerance
  expect(await other.tryAcquire('s', { limit: 2 })).not.toBeNull();
});

test('untrusted clocks: a slot seen unchanged for less than its lease plus the tolerance is not taken', async () => {
  const { time, other } = await twoSlotsNobodyRenews('untrusted');
  expect(await other.tryAcquire('s', { limit: 2 })).toBeNull(); // first seen now
  await time.advance(1_300);
  expect(await other.tryAcquire('s', { limit: 2 })).toBeNull();
  await time.advance(300); // seen unchanged for 1.6 s: beyond the lease plus the tolerance
  expect(await other.tryAcquire('s', { limit: 2 })).not.toBeNull();
});
