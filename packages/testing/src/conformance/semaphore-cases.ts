// Semaphores (`limit` above 1): the contention and slot cases on a store that has them, the
// documented refusal on one that does not, and a bad limit refused everywhere.
import { expect, test } from 'vitest';
import { type LockRun, uniqueKey } from './lock-run.js';
import { semaphoreContentionCases } from './semaphore-contention.js';
import { semaphoreSlotCases } from './semaphore-slots.js';

export function semaphoreCases<Store>(run: LockRun<Store>): void {
  const { client, limits, title } = run;
  const { LockConfigError } = run.latch;

  test('a bad limit fails fast with LockConfigError, and nothing is written', async () => {
    const key = uniqueKey('bad-limit');
    const a = client();
    const bad: Array<() => Promise<unknown>> = [
      () => a.acquire(key, { limit: 0 }),
      () => a.acquire(key, { limit: -1 }),
      () => a.acquire(key, { limit: 2.5 }),
      () => a.acquire(key, { limit: 101 }),
      () => a.acquire(key, { limit: Number.NaN }),
      () => a.acquire(key, { limit: '3' as unknown as number }),
      () => a.tryAcquire(key, { limit: 0 }),
      () => a.withLock(key, () => undefined, { limit: 101 }),
      () => a.acquireAll([key, `${key}/2`], { limit: 0 }),
    ];
    for (const call of bad) {
      await expect(Promise.resolve().then(call)).rejects.toBeInstanceOf(LockConfigError);
    }
    expect(await a.inspect(key)).toMatchObject({ state: 'free', fencingToken: 0, holders: [] });
  });

  if (limits.semaphores) {
    test(
      title('limit above 1 is refused with LockConfigError before any request', limits.semaphores),
      async () => {
        const key = uniqueKey('no-semaphores');
        const a = client();
        // Refused before any request: with every write failing, the answer is still the refusal.
        const heal = run.backend().breakWrites();
        try {
          const refused: Array<() => Promise<unknown>> = [
            () => a.acquire(key, { limit: 3 }),
            () => a.acquire(key, { limit: 2, waitMs: 0 }),
            () => a.tryAcquire(key, { limit: 3 }),
            () => a.withLock(key, () => undefined, { limit: 3 }),
            () => a.acquireAll([key, `${key}/2`], { limit: 3 }),
          ];
          for (const call of refused) {
            const error = await Promise.resolve()
              .then(call)
              .catch((e: unknown) => e);
            expect(error).toBeInstanceOf(LockConfigError);
            expect((error as Error).message).toMatch(/limit/);
          }
        } finally {
          heal();
        }
        expect(await a.inspect(key)).toMatchObject({ state: 'free', fencingToken: 0 });
        // A lock (limit 1) still works.
        const lock = await a.acquire(key, { limit: 1, waitMs: 5000 });
        expect(lock.isHeld).toBe(true);
        await lock.release();
      },
    );
    return;
  }
  semaphoreContentionCases(run);
  semaphoreSlotCases(run);
}
