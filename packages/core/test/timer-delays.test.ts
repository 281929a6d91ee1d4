import { expect, test } from 'vitest';
import { LockClient, memoryStore } from '../src/index.js';

// Node fires a timer whose delay it cannot hold (Infinity, or above 2^31 - 1 ms) after 1 ms, and
// warns on stderr: a fail-closed lease's deadline must arm no timer at all.
test.each([
  ['a fail-closed lock', Number.POSITIVE_INFINITY, 'heartbeat'],
  ['a lock of a 30-day lease', 30 * 24 * 3_600_000, 'heartbeat'],
  ['a lock nothing renews, released by handle (the CLI)', 30 * 60_000, 'none'],
] as const)('%s sets no timer with a delay Node cannot hold', async (_name, leaseMs, renews) => {
  const delays: number[] = [];
  const time = {
    now: () => Date.now(),
    monotonic: () => performance.now(),
    setTimer(callback: () => void, ms: number, options?: { keepAlive?: boolean }) {
      delays.push(ms);
      const timer = setTimeout(callback, Math.min(ms, 2_147_483_647));
      if (!options?.keepAlive) timer.unref();
      return { cancel: () => clearTimeout(timer) };
    },
  };
  const store = memoryStore();
  const heartbeatMs = renews === 'none' ? false : undefined;
  const locks = new LockClient({ store, leaseMs, heartbeatMs, clock: { time } });
  const lock = await locks.acquire('k');
  if (renews === 'none') {
    const other = new LockClient({ store, heartbeatMs: false, clock: { time } });
    await other.release('k', lock.handle);
    await other.close();
  } else {
    await lock.extend(leaseMs);
    await lock.release();
  }
  await locks.close();
  expect(delays.length).toBeGreaterThan(0);
  expect(delays.filter((ms) => !(Number.isFinite(ms) && ms >= 0 && ms <= 2_147_483_647))).toEqual([]);
});
