import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { LockClient, type LockStore, memoryStore } from '../src/index.js';

// Fake timers: the test reads the exact instant of each claim instead of timing anything.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

test("a waiter whose next poll would come after the holder's lease ends claims right when it ends", async () => {
  const inner = memoryStore();
  const claims: number[] = [];
  const store: LockStore = {
    ...inner,
    write: async (key, record, condition) => {
      claims.push(Date.now());
      return inner.write(key, record, condition);
    },
  };
  // The holder dies without renewing; the waiter's polls grow towards a minute apart.
  const abandoned = await new LockClient({ store, leaseMs: 10_000, heartbeatMs: false }).acquire(
    'migrations',
  );
  const expiresAt = abandoned.expiresAt!;
  const waiter = new LockClient({ store, pollMs: 60_000 });
  const acquiring = waiter.acquire('migrations');
  await vi.advanceTimersByTimeAsync(20_000);
  const lock = await acquiring;
  const won = claims.at(-1)!;
  // Claimed just after the lease ended, not at the next poll (which would be seconds later).
  expect(won).toBeGreaterThan(expiresAt);
  expect(won - expiresAt).toBeLessThanOrEqual(10);
  expect(lock.fencingToken).toBe(2);
});
