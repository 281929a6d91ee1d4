// The slots of a semaphore one by one: what inspect shows, expired slots taken over, slots
// released or resumed by handle from another client, and holders with another limit refused.
import { expect, test } from 'vitest';
import type { LockLike } from './latch-module.js';
import { delay, type LockRun, uniqueKey } from './lock-run.js';

export function semaphoreSlotCases<Store>(run: LockRun<Store>): void {
  const { client } = run;
  const { LockConfigError, LockLostError, LockTimeoutError } = run.latch;

  /** A LockConfigError whose message (the key left out) names both limits. */
  const expectLimitRefusal = (error: unknown, key: string, held: number, asked: number) => {
    expect(error).toBeInstanceOf(LockConfigError);
    const text = (error as Error).message.split(key).join('');
    expect(text).toMatch(new RegExp(`\\b${held}\\b`));
    expect(text).toMatch(new RegExp(`\\b${asked}\\b`));
  };

  test('inspect lists every holder of a semaphore with its token, owner and context', async () => {
    const key = uniqueKey('semaphore-inspect');
    const holders = [client(), client(), client()];
    const locks: LockLike[] = [];
    for (const [i, holder] of holders.entries()) {
      locks.push(await holder.acquire(key, { limit: 4, context: `job ${i}` }));
    }
    const info = await client().inspect(key);
    expect(info).toMatchObject({ state: 'held', limit: 4 });
    expect(info.fencingToken).toBe(Math.max(...locks.map((lock) => lock.fencingToken)));
    expect(
      info.holders.map(({ owner, context, fencingToken, state }) => ({
        owner,
        context,
        fencingToken,
        state,
      })),
    ).toEqual(
      locks.map((lock, i) => ({
        owner: holders[i]!.owner,
        context: `job ${i}`,
        fencingToken: lock.fencingToken,
        state: 'held',
      })),
    );
    await Promise.all(locks.map((lock) => lock.release()));
    expect(await client().inspect(key)).toMatchObject({ state: 'free', holders: [] });
  });

  test('expired slots are taken over only once their leases ran out, and their holders learn they lost', async () => {
    const key = uniqueKey('semaphore-expiry');
    const limit = 3;
    // Holders that stop renewing, like crashed processes; the lease leaves room for the checks below.
    const crashed = client({ leaseMs: 1500, heartbeatMs: false });
    const waiter = client({ leaseMs: 5000 });
    const stale: LockLike[] = [];
    for (let i = 0; i < limit; i++) stale.push(await crashed.acquire(key, { limit, waitMs: 0 }));
    const staleTokens = stale.map((lock) => lock.fencingToken);
    // While the leases run, every slot is taken.
    expect(await waiter.tryAcquire(key, { limit })).toBeNull();
    const timeout = await waiter.acquire(key, { limit, waitMs: 100 }).catch((error: unknown) => error);
    expect(timeout).toBeInstanceOf(LockTimeoutError);
    expect((timeout as { limit?: number }).limit).toBe(limit);

    const first = await waiter.acquire(key, { limit, waitMs: 10_000 });
    // Ordering, not timing: the first slot freed was the earliest lease, and its holder's own
    // deadline had passed before the takeover.
    expect(stale[0]!.signal.aborted).toBe(true);
    expect(stale[0]!.signal.reason).toBeInstanceOf(LockLostError);
    expect(first.fencingToken).toBeGreaterThan(Math.max(...staleTokens));
    // The other leases run out too: every slot is taken over.
    const rest = [
      await waiter.acquire(key, { limit, waitMs: 10_000 }),
      await waiter.acquire(key, { limit, waitMs: 10_000 }),
    ];
    for (const lock of stale) {
      expect(lock.signal.aborted).toBe(true);
      await expect(lock.release()).rejects.toBeInstanceOf(LockLostError);
    }
    const taken = [first, ...rest];
    const info = await waiter.inspect(key);
    expect(info.holders.map((holder) => holder.fencingToken)).toEqual(taken.map((lock) => lock.fencingToken));
    await Promise.all(taken.map((lock) => lock.release()));
  });

  test('a slot released by handle from another client is free for the next contender', async () => {
    const key = uniqueKey('semaphore-release-handle');
    const a = client();
    const b = client();
    const c = client();
    const first = await a.acquire(key, { limit: 2 });
    const second = await a.acquire(key, { limit: 2 });
    expect(await c.tryAcquire(key, { limit: 2 })).toBeNull();
    await b.release(key, first.handle);
    const next = await c.tryAcquire(key, { limit: 2 });
    expect(next).not.toBeNull();
    expect(next!.fencingToken).toBeGreaterThan(second.fencingToken);
    // Only the released slot changed hands.
    expect(second.isHeld).toBe(true);
    const info = await b.inspect(key);
    expect(info.holders.map((holder) => holder.fencingToken)).toEqual([
      second.fencingToken,
      next!.fencingToken,
    ]);
    await expect(first.release()).rejects.toBeInstanceOf(LockLostError);
    await Promise.all([second.release(), next!.release()]);
    expect((await b.inspect(key)).holders).toEqual([]);
  });

  test('a slot resumed by handle in another client stays held there and is renewed by it', async () => {
    const key = uniqueKey('semaphore-resume');
    const leaseMs = 1000;
    const a = client({ leaseMs, heartbeatMs: false });
    const b = client({ leaseMs, heartbeatMs: 150 });
    const c = client({ leaseMs });
    const moved = await a.acquire(key, { limit: 2 });
    const left = await a.acquire(key, { limit: 2 });
    const resumed = await b.resume(moved.handle);
    expect(resumed.fencingToken).toBe(moved.fencingToken);
    // The first client's writes now fail: the slot moved to the resuming client.
    await expect(moved.extend(leaseMs)).rejects.toBeInstanceOf(LockLostError);
    // Two leases later only the renewed slot is held: the other one ran out.
    await delay(2 * leaseMs);
    expect(resumed.isHeld).toBe(true);
    const info = await c.inspect(key);
    expect(info.holders.map(({ fencingToken, state }) => ({ fencingToken, state }))).toEqual([
      { fencingToken: moved.fencingToken, state: 'held' },
      { fencingToken: left.fencingToken, state: 'expired' },
    ]);
    const next = await c.tryAcquire(key, { limit: 2 });
    expect(next).not.toBeNull();
    expect(await c.tryAcquire(key, { limit: 2 })).toBeNull();
    await Promise.all([resumed.release(), next!.release()]);
  });

  test('holders with another limit are refused with a LockConfigError naming both limits', async () => {
    const key = uniqueKey('semaphore-limits');
    const a = client();
    const b = client();
    const held = [await a.acquire(key, { limit: 3 }), await a.acquire(key, { limit: 3 })];
    // A slot is free at limit 3, and would be at limit 2 or 1 if the limits were not compared.
    const refusals: Array<[asked: number, call: () => Promise<unknown>]> = [
      [2, () => b.acquire(key, { limit: 2, waitMs: 1000 })],
      [2, () => b.tryAcquire(key, { limit: 2 })],
      [2, () => b.withLock(key, () => undefined, { limit: 2, waitMs: 1000 })],
      [1, () => b.acquire(key, { waitMs: 1000 })],
      [1, () => b.tryAcquire(key)],
    ];
    for (const [asked, call] of refusals) {
      expectLimitRefusal(await call().catch((error: unknown) => error), key, 3, asked);
    }
    const info = await b.inspect(key);
    expect(info.limit).toBe(3);
    expect(info.holders.map((holder) => holder.fencingToken)).toEqual(held.map((lock) => lock.fencingToken));
    await Promise.all(held.map((lock) => lock.release()));

    // A plain lock is a limit of 1: a semaphore call beside its holder is refused the same way.
    const plain = await a.acquire(key);
    expectLimitRefusal(await b.tryAcquire(key, { limit: 3 }).catch((error: unknown) => error), key, 1, 3);
    expectLimitRefusal(
      await b.acquire(key, { limit: 3, waitMs: 1000 }).catch((error: unknown) => error),
      key,
      1,
      3,
    );
    const after = await b.inspect(key);
    expect(after.limit).toBe(1);
    expect(after.holders.map((holder) => holder.fencingToken)).toEqual([plain.fencingToken]);
    await plain.release();
    // With no holder left, the key may take another limit.
    const semaphore = await b.acquire(key, { limit: 3, waitMs: 1000 });
    expect(semaphore.fencingToken).toBeGreaterThan(plain.fencingToken);
    await semaphore.release();
  });
}
