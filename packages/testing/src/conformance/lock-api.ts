// The API's edges: bad input refused before anything is sent, a corrupted record reported
// (never overwritten), scope-exit release, and cancelled waiting.
import { expect, test } from 'vitest';
import { type LockRun, uniqueKey } from './lock-run.js';

export function apiCases<Store>(run: LockRun<Store>): void {
  const { client } = run;
  const { LockClient, LockConfigError, LockCorruptedError } = run.latch;

  test('bad input fails fast with LockConfigError', async () => {
    const a = client();
    const key = uniqueKey('bad');
    const store = () => run.backend().store();
    const bad: Array<() => unknown> = [
      () => a.acquire(''),
      () => a.acquire(42 as unknown as string),
      () => a.acquire('x'.repeat(5000)),
      () => a.acquire('lone \uD800 surrogate'),
      () => a.acquire(key, { waitMs: -1 }),
      () => a.acquire(key, { waitMs: Number.NaN }),
      () => a.acquire(key, { leaseMs: 0 }),
      () => a.acquire(key, { leaseMs: 1000, heartbeatMs: 1000 }),
      () => a.acquire(key, { context: 7 as unknown as string }),
      () => a.tryAcquire(key, { leaseMs: -5 }),
      () => a.withLock(key, 'not a function' as unknown as () => void),
      () => a.inspect(''),
      () => a.release(key, 'not-a-handle'),
      () => a.resume('latch1.garbage'),
      () => a.forceRelease(''),
      () => new LockClient({ store: store(), leaseMs: -1 }),
      () => new LockClient({ store: store(), leaseMs: 1000, heartbeatMs: 2000 }),
      () => new LockClient({ store: undefined as never }),
    ];
    for (const call of bad) {
      await expect(Promise.resolve().then(call)).rejects.toBeInstanceOf(LockConfigError);
    }
    const lock = await a.acquire(key);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(lock.update(cyclic)).rejects.toBeInstanceOf(LockConfigError);
    await expect(lock.update({ n: 10n } as unknown)).rejects.toBeInstanceOf(LockConfigError);
    await expect(lock.update({ big: 'x'.repeat(500_000) })).rejects.toBeInstanceOf(LockConfigError);
    await expect(lock.release({ data: { when: new Date() } })).rejects.toBeInstanceOf(LockConfigError);
    await lock.release();
  });

  test('a corrupted record is reported, never overwritten', async () => {
    const key = uniqueKey('corrupt');
    const a = client();
    await run.backend().corrupt(key);
    await expect(a.tryAcquire(key)).rejects.toBeInstanceOf(LockCorruptedError);
    await expect(a.acquire(key, { waitMs: 200 })).rejects.toBeInstanceOf(LockCorruptedError);
    await expect(a.inspect(key)).rejects.toThrow(key);
  });

  test('await using releases at scope exit', async () => {
    const key = uniqueKey('dispose');
    const a = client();
    {
      await using lock = await a.acquire(key);
      expect(lock.isHeld).toBe(true);
      expect((await a.inspect(key)).state).toBe('held');
    }
    expect((await a.inspect(key)).state).toBe('free');
  });

  test('an aborted signal cancels waiting', async () => {
    const key = uniqueKey('abort');
    const a = client();
    const b = client();
    const lock = await a.acquire(key);
    const controller = new AbortController();
    const waiting = b.acquire(key, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('no longer needed')), 100);
    await expect(waiting).rejects.toThrow('no longer needed');
    await lock.release();
  });
}
