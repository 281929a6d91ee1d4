// Several keys at once with acquireAll: all or none, in one order every process shares (so
// overlapping sets cannot deadlock), released together, and lost as soon as any one is lost.
import { expect, test } from 'vitest';
import type { LockClientLike } from './latch-module.js';
import { delay, type LockRun, uniqueKey, untilAborted } from './lock-run.js';

export function multiKeyCases<Store>(run: LockRun<Store>): void {
  const { client } = run;
  const { LockLostError, LockTimeoutError } = run.latch;

  /** Keys `<base>/<name>` for one test. */
  const keysFor = (label: string, names: string[]) => {
    const base = uniqueKey(label);
    return names.map((name) => `${base}/${name}`);
  };

  test('acquireAll takes every key in sorted order, with a fencing token each; release() frees them all', async () => {
    const [b, a, c] = keysFor('all', ['b', 'a', 'c']) as [string, string, string];
    const holder = client();
    const other = client();
    const set = await holder.acquireAll([b, a, c]);
    expect(set.keys).toEqual([a, b, c]);
    expect(set.isHeld).toBe(true);
    expect(Object.keys(set.fencingTokens).sort()).toEqual([a, b, c]);
    for (const key of [a, b, c]) {
      expect(set.fencingTokens[key]).toBe(set.lock(key).fencingToken);
      expect(await other.inspect(key)).toMatchObject({ state: 'held', owner: holder.owner });
      expect(await other.tryAcquire(key)).toBeNull();
    }
    await set.release();
    expect(set.isHeld).toBe(false);
    for (const key of [a, b, c]) expect((await other.inspect(key)).state).toBe('free');
  });

  test('acquireAll gets none of the keys when one stays held: the ones it took are released before the timeout', async () => {
    // The held key sorts last, so the others were taken before acquireAll gave up.
    const [a, b, c] = keysFor('none', ['a', 'b', 'c']) as [string, string, string];
    const elsewhere = client();
    const holder = client();
    const other = client();
    const blocking = await elsewhere.acquire(c);
    const error = await holder.acquireAll([c, b, a], { waitMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockTimeoutError);
    for (const key of [a, b]) {
      expect((await other.inspect(key)).state).toBe('free');
      const lock = await other.tryAcquire(key);
      expect(lock).not.toBeNull();
      await lock!.release();
    }
    await blocking.release();
  });

  test('await using releases every lock of a set at scope exit', async () => {
    const keys = keysFor('all-dispose', ['x', 'y']);
    const holder = client();
    {
      await using set = await holder.acquireAll(keys);
      expect(set.isHeld).toBe(true);
      for (const key of keys) expect((await holder.inspect(key)).state).toBe('held');
    }
    for (const key of keys) expect((await holder.inspect(key)).state).toBe('free');
  });

  test("a set's signal aborts when any of its locks is lost; release() still frees the others", async () => {
    const [kept, stolen] = keysFor('all-lost', ['kept', 'stolen']) as [string, string];
    const holder = client({ leaseMs: 1000, heartbeatMs: 100 });
    const operator = client();
    const set = await holder.acquireAll([kept, stolen]);
    expect(await operator.forceRelease(stolen)).toBe(true);
    const reason = await untilAborted(set.signal);
    expect(reason).toBeInstanceOf(LockLostError);
    expect(set.isHeld).toBe(false);
    expect(set.lock(kept).isHeld).toBe(true);
    await expect(set.release()).rejects.toBeInstanceOf(LockLostError);
    expect((await operator.inspect(kept)).state).toBe('free');
  });

  test('two clients taking overlapping keys given in opposite orders both finish 10 rounds (no deadlock)', async () => {
    const keys = keysFor('all-order', ['k1', 'k2', 'k3']);
    const rounds = 10;
    let inside = 0;
    let overlaps = 0;
    const finished: number[] = [];
    const worker = async (who: number, replica: LockClientLike, order: string[]) => {
      for (let round = 0; round < rounds; round++) {
        const set = await replica.acquireAll(order, { waitMs: Number.POSITIVE_INFINITY });
        inside += 1;
        if (inside > 1) overlaps += 1;
        await delay(Math.random() * 5);
        inside -= 1;
        await set.release();
      }
      finished.push(who);
    };
    await Promise.all([
      worker(1, client(), keys),
      worker(2, client(), [...keys].reverse()),
      // A second key order that shares only some keys, taken beside the other two.
      worker(3, client(), [keys[2]!, keys[0]!]),
    ]);
    expect(finished.sort()).toEqual([1, 2, 3]);
    expect(overlaps).toBe(0);
  }, 60_000);
}
