// Listing locks: every lock under a prefix as inspect shows it (held, free, expired, a
// semaphore's holders), prefixes that narrow it, unreadable records left out and reported, bad
// input refused before any request, and (when the backend says how) a listing of many pages.
import { expect, test } from 'vitest';
import type { LockClientLike, LockInfoLike, LockLike } from './latch-module.js';
import { delay, type LockRun, uniqueKey } from './lock-run.js';

export function listCases<Store>(run: LockRun<Store>): void {
  const { client, limits, title } = run;
  const { LockConfigError, LockCorruptedError } = run.latch;

  if (limits.list) {
    test(title('list() is refused with LockConfigError when called, before any request', limits.list), () => {
      const a = client();
      // Thrown by the call itself: nothing was returned that could have sent a request.
      expect(() => a.list()).toThrow(LockConfigError);
      expect(() => a.list('x/')).toThrow(/list/);
    });
    return;
  }

  /** Every lock a listing yields. */
  const listAll = async (reader: LockClientLike, prefix?: string, signal?: AbortSignal) => {
    const found: LockInfoLike[] = [];
    for await (const info of reader.list(prefix, signal ? { signal } : {})) found.push(info);
    return found;
  };
  /** The keys a listing yields, in key order when the store lists in no order of its own. */
  const keysOf = (found: LockInfoLike[]) => {
    const keys = found.map((info) => info.key);
    return limits.listOrder ? keys.sort() : keys;
  };

  test(
    title(
      'list() yields every lock under a prefix as inspect shows it: held, free and expired',
      limits.listFree,
    ),
    async () => {
      const base = uniqueKey('list');
      const [expired, free, held] = [`${base}/expired`, `${base}/free`, `${base}/held`];
      const holder = client({ leaseMs: 60_000 });
      const heldLock = await holder.acquire(held, { context: 'listed' });
      await (await holder.acquire(free)).release();
      // Not renewed, like a crashed holder's: its lease runs out and nobody takes it over.
      const stale = await holder.acquire(expired, { leaseMs: 1000, heartbeatMs: false });
      await delay(1300);
      expect(stale.isHeld).toBe(false);

      const reader = client();
      const found = await listAll(reader, `${base}/`);
      expect(keysOf(found)).toEqual(limits.listFree ? [expired, held] : [expired, free, held]);
      for (const info of found) expect(info).toEqual(await reader.inspect(info.key));
      const byKey = new Map(found.map((info) => [info.key, info]));
      expect(byKey.get(held)).toMatchObject({
        state: 'held',
        owner: holder.owner,
        context: 'listed',
        fencingToken: heldLock.fencingToken,
        limit: 1,
        holders: [{ owner: holder.owner, state: 'held', fencingToken: heldLock.fencingToken }],
      });
      if (limits.listFree) {
        expect(byKey.get(expired)).toMatchObject({ state: 'free', fencingToken: 0, holders: [] });
      } else {
        expect(byKey.get(free)).toMatchObject({ state: 'free', holders: [] });
        expect(byKey.get(free)!.fencingToken).toBeGreaterThan(0);
        expect(byKey.get(expired)).toMatchObject({
          state: 'expired',
          owner: holder.owner,
          fencingToken: stale.fencingToken,
          holders: [{ state: 'expired', fencingToken: stale.fencingToken }],
        });
      }
      await heldLock.release();
    },
  );

  test(
    title('list(prefix) yields exactly the keys that start with the prefix, in key order', limits.listOrder),
    async () => {
      const base = uniqueKey('list-prefix');
      // In key order: '-' sorts before '/', and '/' before '0'.
      const keys = [`${base}-sibling`, `${base}/a`, `${base}/b`, `${base}/b/c`, `${base}/b0`];
      const holder = client({ leaseMs: 60_000 });
      // Acquired out of key order: the listing's order is the store's, not the writes'.
      const locks = await Promise.all([...keys].reverse().map((key) => holder.acquire(key)));
      const reader = client();
      expect(keysOf(await listAll(reader, `${base}/`))).toEqual(keys.slice(1));
      expect(keysOf(await listAll(reader, `${base}/b`))).toEqual(keys.slice(2));
      expect(keysOf(await listAll(reader, `${base}/b/`))).toEqual([`${base}/b/c`]);
      expect(keysOf(await listAll(reader, base))).toEqual(keys);
      expect(await listAll(reader, `${base}/none`)).toEqual([]);
      await Promise.all(locks.map((lock) => lock.release()));
    },
  );

  if (!limits.semaphores) {
    test('list() shows a semaphore with its limit and every holder', async () => {
      const base = uniqueKey('list-semaphore');
      const key = `${base}/pool`;
      const holders = [client(), client()];
      const locks: LockLike[] = [];
      for (const [i, holder] of holders.entries()) {
        locks.push(await holder.acquire(key, { limit: 3, context: `worker ${i}` }));
      }
      const reader = client();
      const [info, ...others] = await listAll(reader, `${base}/`);
      expect(others).toEqual([]);
      expect(info).toEqual(await reader.inspect(key));
      expect(info).toMatchObject({
        key,
        state: 'held',
        limit: 3,
        holders: locks.map((lock, i) => ({
          owner: holders[i]!.owner,
          context: `worker ${i}`,
          fencingToken: lock.fencingToken,
          state: 'held',
        })),
      });
      await Promise.all(locks.map((lock) => lock.release()));
    });
  }

  test('list() leaves out a record it cannot read and reports it as an unreadable event', async () => {
    const base = uniqueKey('list-unreadable');
    const [bad, good] = [`${base}/bad`, `${base}/good`];
    await run.backend().corrupt(bad);
    const holder = client({ leaseMs: 60_000 });
    const lock = await holder.acquire(good);
    const events: Array<{ type: string; key: string }> = [];
    const reader = client({ onEvent: (event) => events.push(event) });
    expect(keysOf(await listAll(reader, `${base}/`))).toEqual([good]);
    const unreadable = events.filter((event) => event.type === 'unreadable');
    expect(unreadable.map((event) => event.key)).toEqual([bad]);
    const { error } = unreadable[0] as unknown as { error: Error & { key: string } };
    expect(error).toBeInstanceOf(LockCorruptedError);
    expect(error.key).toBe(bad);
    await lock.release();
  });

  test('list() refuses bad input with LockConfigError when called; an aborted signal ends the listing', async () => {
    const a = client();
    const bad: Array<() => unknown> = [
      () => a.list(42 as unknown as string),
      () => a.list(null as unknown as string),
      () => a.list('lone \uD800 surrogate'),
      () => a.list('x'.repeat(5000)),
      () => a.list('x/', { signal: 'stop' as unknown as AbortSignal }),
      () => a.list('x/', { sginal: new AbortController().signal } as never),
      () => a.list('x/', 7 as never),
    ];
    for (const call of bad) expect(call).toThrow(LockConfigError);
    const base = uniqueKey('list-abort');
    const lock = await a.acquire(`${base}/k`);
    const stop = new AbortController();
    stop.abort(new Error('listing no longer needed'));
    await expect(listAll(a, `${base}/`, stop.signal)).rejects.toThrow('listing no longer needed');
    await lock.release();
  });

  const pagingLocks = run.listPagingLocks;
  if (pagingLocks !== undefined) {
    test(`list() pages through ${pagingLocks} locks: each listed once, in more than one listing request`, async () => {
      const listRequests = run.backend().listRequests;
      if (!listRequests) throw new Error('listPagingLocks needs the backend to count its listRequests()');
      const base = uniqueKey('list-pages');
      const keys = Array.from({ length: pagingLocks }, (_, i) => `${base}/${String(i).padStart(5, '0')}`);
      // Nothing renews (or, as a lock without heartbeats would, polls its record) during the test:
      // the only requests are the acquisitions, the listing and the releases.
      const holder = client({ leaseMs: 300_000, heartbeatMs: 200_000 });
      const locks = await inBatches(keys, (key) => holder.acquire(key));
      const before = listRequests();
      const found = await listAll(client(), `${base}/`);
      const requests = listRequests() - before;
      expect(keysOf(found)).toEqual(keys);
      expect(found.every((info) => info.state === 'held' && info.owner === holder.owner)).toBe(true);
      expect(requests).toBeGreaterThan(1);
      await inBatches(locks, (lock) => lock.release());
    }, 120_000);
  }
}

/** `work` on every item, 32 at a time. */
async function inBatches<T, R>(items: T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += 32) {
    results.push(...(await Promise.all(items.slice(i, i + 32).map(work))));
  }
  return results;
}
