import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { LockClient, type LockEvent, memoryStore } from '../src/index.js';

// Fake timers make the schedule exact: the test counts renewals at known instants instead of
// measuring how long anything took.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

function renewalCounter() {
  const renewals: number[] = [];
  const onEvent = (event: LockEvent) => {
    if (event.type === 'renewed') renewals.push(Date.now());
  };
  return { renewals, onEvent };
}

test('without heartbeatMs, a held lock is renewed every third of its lease', async () => {
  const { renewals, onEvent } = renewalCounter();
  const locks = new LockClient({ store: memoryStore(), leaseMs: 30_000, onEvent });
  const lock = await locks.acquire('reports/daily');
  const acquiredAt = Date.now();

  await vi.advanceTimersByTimeAsync(9_999);
  expect(renewals).toEqual([]);
  await vi.advanceTimersByTimeAsync(1);
  expect(renewals).toEqual([acquiredAt + 10_000]);
  await vi.advanceTimersByTimeAsync(20_000);
  expect(renewals).toEqual([acquiredAt + 10_000, acquiredAt + 20_000, acquiredAt + 30_000]);
  expect(lock.isHeld).toBe(true);
  await lock.release();
});

test('a per-call leaseMs without heartbeatMs renews at a third of that lease', async () => {
  const { renewals, onEvent } = renewalCounter();
  const locks = new LockClient({ store: memoryStore(), leaseMs: 30_000, onEvent });
  const lock = await locks.acquire('reports/hourly', { leaseMs: 6_000 });
  const acquiredAt = Date.now();

  await vi.advanceTimersByTimeAsync(6_000);
  expect(renewals).toEqual([acquiredAt + 2_000, acquiredAt + 4_000, acquiredAt + 6_000]);
  await lock.release();
});

test('heartbeatMs: false renews nothing, and the lease runs out', async () => {
  const { renewals, onEvent } = renewalCounter();
  const locks = new LockClient({ store: memoryStore(), leaseMs: 3_000, heartbeatMs: false, onEvent });
  const lock = await locks.acquire('reports/once');

  await vi.advanceTimersByTimeAsync(3_000);
  expect(renewals).toEqual([]);
  expect(lock.isHeld).toBe(false);
  expect(lock.signal.aborted).toBe(true);
});
