// Losing a lock: stolen, renewals failing, a stalled event loop, a loss while withLock ran.
// The holder must learn of it (signal, onLost, LockLostError) before it acts on a stale lease.
import { expect, test } from 'vitest';
import type { LockLike } from './latch-module.js';
import { type LockRun, uniqueKey, untilAborted } from './lock-run.js';

export function lossCases<Store>(run: LockRun<Store>): void {
  const { client, limits, title } = run;
  const { LockLostError } = run.latch;

  test(title('the loss signal fires when the record is stolen', limits.newHolderInLoss), async () => {
    const key = uniqueKey('stolen');
    const a = client({ leaseMs: 1000, heartbeatMs: 100 });
    const b = client({ leaseMs: 1000 });
    const lost: Error[] = [];
    const lock = await a.acquire(key, { onLost: (error) => lost.push(error) });
    expect(await b.forceRelease(key)).toBe(true);
    const thief = await b.acquire(key, { waitMs: 1000 });
    const reason = await untilAborted(lock.signal);
    expect(reason).toBeInstanceOf(LockLostError);
    if (limits.newHolderInLoss) expect(String((reason as Error).message)).toMatch(/deleted by someone else/);
    else expect(String((reason as Error).message)).toContain(b.owner);
    expect(lost).toHaveLength(1);
    expect(thief.fencingToken).toBeGreaterThan(lock.fencingToken);
    await expect(lock.update({ late: true })).rejects.toBeInstanceOf(LockLostError);
    await thief.release();
  });

  test('the loss signal fires when renewals keep failing', async () => {
    const key = uniqueKey('renew-fails');
    const a = client({ leaseMs: 1000, heartbeatMs: 100, retry: { attempts: 2, baseMs: 10, maxMs: 20 } });
    const lock = await a.acquire(key);
    const heal = run.backend().breakWrites();
    try {
      const reason = await untilAborted(lock.signal);
      expect(reason).toBeInstanceOf(LockLostError);
      // On a loaded machine the heartbeat can wake after the deadline and report it as a pause: the same loss.
      expect((reason as Error).message).toMatch(/ran out before a renewal|paused past its lease/);
    } finally {
      heal();
    }
  });

  test('a holder whose event loop was blocked past its lease loses the lock before running on', async () => {
    const key = uniqueKey('paused');
    const a = client({ leaseMs: 1000, heartbeatMs: 100 });
    const lock = await a.acquire(key);
    const until = performance.now() + 1300;
    while (performance.now() < until) {
      // a synchronous stall: no timer, no renewal can run
    }
    const reason = await untilAborted(lock.signal);
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as Error).message).toMatch(/paused past its lease|ran out before a renewal/);
    await expect(lock.update({ late: true })).rejects.toBeInstanceOf(LockLostError);
  });

  test('withLock releases when fn throws and reports a loss that happened while fn ran', async () => {
    const key = uniqueKey('with-lock');
    const a = client({ leaseMs: 1000, heartbeatMs: 100 });
    const b = client();
    await expect(a.withLock(key, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect((await b.inspect(key)).state).toBe('free');
    const result = a.withLock(key, async (lock: LockLike) => {
      await b.forceRelease(key);
      await untilAborted(lock.signal);
      return 'done';
    });
    await expect(result).rejects.toBeInstanceOf(LockLostError);
  });
}
