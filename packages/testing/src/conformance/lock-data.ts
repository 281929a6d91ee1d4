// What travels with a lock: data and context in the record, handles that let another
// process resume or release it, and a minimum hold time kept by the record.
import { expect, test } from 'vitest';
import { type LockRun, uniqueKey } from './lock-run.js';

export function dataCases<Store>(run: LockRun<Store>): void {
  const { client, limits, title, expectNextToken } = run;
  const { LockConfigError, LockLostError, LockNotHeldError, LockTimeoutError } = run.latch;

  test(title('data round-trips through update, release and the next acquire', limits.data), async () => {
    const key = uniqueKey('data');
    const a = client();
    const b = client();
    const lock = await a.acquire<{ step: number; note?: string }>(key);
    expect(lock.data).toBeUndefined();
    if (limits.data) {
      // Refused before anything is sent, so the lock is still held and nothing is lost silently.
      await expect(lock.update({ step: 1 })).rejects.toBeInstanceOf(LockConfigError);
      await expect(lock.release({ data: { step: 2 } })).rejects.toThrow(/cannot store lock data/);
      expect(lock.isHeld).toBe(true);
      expect(await b.inspect(key)).toMatchObject({ state: 'held', owner: a.owner });
      expect((await b.inspect(key)).data).toBeUndefined();
      await lock.release();
      expect((await b.inspect(key)).state).toBe('free');
      return;
    }
    await lock.update({ step: 1, note: 'naïve ✓ 🚀' });
    expect((await b.inspect(key)).data).toEqual({ step: 1, note: 'naïve ✓ 🚀' });
    await lock.release({ data: { step: 2 } });
    const next = await b.acquire<{ step: number }>(key, { waitMs: 1000 });
    expect(next.data).toEqual({ step: 2 });
    await next.release();
    expect((await a.inspect(key)).data).toEqual({ step: 2 });
  });

  test('context is stored, shown by inspect and named in a timeout', async () => {
    const key = uniqueKey('context');
    const a = client();
    const b = client();
    const lock = await a.acquire(key, { context: 'deploy #42 on host-a' });
    expect(await b.inspect(key)).toMatchObject({ state: 'held', context: 'deploy #42 on host-a' });
    const error = await b.acquire(key, { waitMs: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect((error as Error).message).toContain('held by deploy #42 on host-a');
    await lock.release();
  });

  test(title('a handle lets a second client resume and then release the lock', limits.resume), async () => {
    const key = uniqueKey('handle');
    const a = client({ leaseMs: 2000 });
    const b = client({ leaseMs: 2000 });
    const lock = await a.acquire(key);
    if (limits.resume) {
      await expect(b.resume(lock.handle)).rejects.toBeInstanceOf(LockConfigError);
      expect(lock.isHeld).toBe(true);
      await b.release(key, lock.handle);
      expect((await a.inspect(key)).state).toBe('free');
      await expect(b.release(key, lock.handle)).rejects.toBeInstanceOf(LockNotHeldError);
      return;
    }
    const resumed = await b.resume(lock.handle);
    expect(resumed.fencingToken).toBe(lock.fencingToken);
    // The first process's renewal now fails: the lease moved to the resuming client.
    await expect(lock.extend(2000)).rejects.toBeInstanceOf(LockLostError);
    await b.release(key, resumed.handle);
    expect((await a.inspect(key)).state).toBe('free');
    await expect(b.release(key, resumed.handle)).rejects.toBeInstanceOf(LockNotHeldError);
  });

  test(title('a handle releases a lock acquired by another client', limits.data), async () => {
    const key = uniqueKey('handle-release');
    const a = client();
    const b = client();
    const lock = await a.acquire(key, { heartbeatMs: false });
    if (limits.data) {
      await expect(b.release(key, lock.handle, { data: { deployed: 'v2' } })).rejects.toBeInstanceOf(
        LockConfigError,
      );
      expect((await b.inspect(key)).state).toBe('held');
      await b.release(key, lock.handle);
      expect(await b.inspect(key)).toMatchObject({ state: 'free' });
      await expect(b.release(`${key}-other`, lock.handle)).rejects.toBeInstanceOf(LockConfigError);
      return;
    }
    await b.release(key, lock.handle, { data: { deployed: 'v2' } });
    const info = await b.inspect(key);
    expect(info).toMatchObject({ state: 'free', data: { deployed: 'v2' } });
    await expect(b.release(`${key}-other`, lock.handle)).rejects.toBeInstanceOf(LockConfigError);
  });

  test(
    title(
      'lockAtLeastMs keeps a quickly released lock held until the minimum has passed',
      limits.data ?? limits.consecutiveTokens,
    ),
    async () => {
      const key = uniqueKey('at-least');
      const a = client({ leaseMs: 5000 });
      const b = client({ leaseMs: 5000 });
      const lock = await a.acquire(key, { lockAtLeastMs: 600 });
      await lock.release(limits.data ? {} : { data: { ran: true } });
      expect(lock.isHeld).toBe(false);
      expect(await b.tryAcquire(key)).toBeNull();
      expect(await b.inspect(key)).toMatchObject(
        limits.data ? { state: 'held', owner: a.owner } : { state: 'held', data: { ran: true } },
      );
      const next = await b.acquire(key, { waitMs: 5000 });
      expectNextToken(next.fencingToken, lock.fencingToken);
      await next.release();
      const quick = await b.acquire(key, { lockAtLeastMs: 1 });
      await new Promise((resolve) => setTimeout(resolve, 5));
      await quick.release();
      expect((await a.inspect(key)).state).toBe('free');
    },
  );
}
