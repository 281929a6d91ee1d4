import { describe, expect, test } from 'vitest';
import { LockClient, LockConfigError, type LockEvent, LockStoreError, memoryStore } from '../src/index.js';
import { mapInOrder } from '../src/shared/map-in-order.js';
import type { ListPage, LockStore } from '../src/store.js';

// What locks.list() does above any particular store; each store's own listing is tested with
// the store (test/stores) and in the conformance suites, its request counts in request-budget.

/** Every lock a listing yields. */
async function listAll(locks: LockClient, prefix?: string, signal?: AbortSignal) {
  const found = [];
  for await (const info of locks.list(prefix, signal ? { signal } : {})) found.push(info);
  return found;
}

/** A memory store with some of its methods replaced. */
function memoryStoreWith(parts: Partial<LockStore> & Record<string, unknown>) {
  const store = memoryStore();
  return { store, replaced: Object.assign(Object.create(store), parts) as LockStore };
}

describe('locks.list()', () => {
  test('a store without list: a LockConfigError naming the store and what to add, before any request', () => {
    const { store, replaced } = memoryStoreWith({ kind: 'custom-table', list: undefined });
    const locks = new LockClient({ store: replaced });
    const error = (() => {
      try {
        locks.list('reports/');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(LockConfigError);
    expect((error as Error).message).toMatch(/the custom-table store has no list method/);
    expect((error as Error).message).toMatch(/list\(prefix, cursor\)/);
    expect(() => locks.list()).toThrow(LockConfigError);
    expect(store.requestCount).toBe(0);
  });

  test('yields inspect for every key under the prefix, with the client clock as now', async () => {
    let now = 1_000_000;
    const store = memoryStore();
    const time = { now: () => now, monotonic: () => performance.now() };
    const locks = new LockClient({ store, clock: { time }, heartbeatMs: false, leaseMs: 1000 });
    const lock = await locks.acquire('jobs/a', { context: 'nightly' });
    await (await locks.acquire('jobs/b')).release();
    await (await locks.acquire('other')).release();
    expect(await listAll(locks, 'jobs/')).toEqual([
      await locks.inspect('jobs/a'),
      await locks.inspect('jobs/b'),
    ]);
    expect((await listAll(locks, 'jobs/'))[0]).toMatchObject({ state: 'held', context: 'nightly' });
    now += 5000; // the lease ran out on the client's clock
    expect((await listAll(locks, 'jobs/'))[0]).toMatchObject({
      key: 'jobs/a',
      state: 'expired',
      fencingToken: lock.fencingToken,
    });
    expect((await listAll(locks)).map((info) => info.key)).toEqual(['jobs/a', 'jobs/b', 'other']);
    expect(await listAll(locks, '')).toHaveLength(3);
    await locks.close();
  });

  test('memory lists in key order by UTF-8 bytes, as S3 does (not JavaScript string order)', async () => {
    const locks = new LockClient({ store: memoryStore() });
    const keys = ['k/\u{1F512}', 'k/\uFFFD', 'k/a'];
    for (const key of keys) await (await locks.acquire(key)).release();
    expect((await listAll(locks, 'k/')).map((info) => info.key)).toEqual(['k/a', 'k/\uFFFD', 'k/\u{1F512}']);
    expect([...keys].sort()).toEqual(['k/a', 'k/\u{1F512}', 'k/\uFFFD']);
  });

  test('a key whose record is gone by the time it is read is left out', async () => {
    const { store, replaced } = memoryStoreWith({});
    replaced.list = async (prefix, cursor): Promise<ListPage> => {
      const page = await store.list!(prefix, cursor);
      // Keys only, as S3 names them, one of which was deleted since.
      return { keys: [...page.keys.map(({ key }) => ({ key })), { key: 'a/gone' }], cursor: page.cursor };
    };
    const locks = new LockClient({ store: replaced });
    await (await locks.acquire('a/kept')).release();
    expect((await listAll(locks, 'a/')).map((info) => info.key)).toEqual(['a/kept']);
  });

  test('an unreadable record is left out and reported once as an unreadable event', async () => {
    const store = memoryStore();
    const events: LockEvent[] = [];
    const locks = new LockClient({ store, onEvent: (event) => events.push(event) });
    await (await locks.acquire('a/1')).release();
    store.documents.set('a/2', { version: 'x', text: '{"latch":1,' });
    await (await locks.acquire('a/3')).release();
    events.length = 0;
    expect((await listAll(locks, 'a/')).map((info) => info.key)).toEqual(['a/1', 'a/3']);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'unreadable', key: 'a/2', owner: locks.owner });
    expect((events[0] as Extract<LockEvent, { type: 'unreadable' }>).error.reason).toBe('not valid JSON');
  });

  test('a signal that aborts mid-listing ends it with its reason', async () => {
    const locks = new LockClient({ store: memoryStore() });
    for (const key of ['a/1', 'a/2', 'a/3']) await (await locks.acquire(key)).release();
    const stop = new AbortController();
    const seen: string[] = [];
    const listing = (async () => {
      for await (const info of locks.list('a/', { signal: stop.signal })) {
        seen.push(info.key);
        stop.abort(new Error('enough'));
      }
    })();
    await expect(listing).rejects.toThrow('enough');
    expect(seen).toEqual(['a/1']);
  });

  test('a store whose list returns the cursor it was given fails instead of listing for ever', async () => {
    const { replaced } = memoryStoreWith({
      list: async (): Promise<ListPage> => ({ keys: [], cursor: 'same' }),
    });
    const locks = new LockClient({ store: replaced });
    await expect(listAll(locks, 'a/')).rejects.toBeInstanceOf(LockStoreError);
  });

  test('a listing page that fails with a retryable error is asked for again', async () => {
    let failures = 1;
    const { store, replaced } = memoryStoreWith({});
    replaced.list = async (prefix, cursor) => {
      if (failures-- > 0) throw new LockStoreError('throttled', { retryable: true, reason: 'throttled' });
      return store.list!(prefix, cursor);
    };
    const locks = new LockClient({ store: replaced, retry: { baseMs: 1, maxMs: 2 } });
    await (await locks.acquire('a/1')).release();
    expect((await listAll(locks, 'a/')).map((info) => info.key)).toEqual(['a/1']);
  });
});

describe('mapInOrder', () => {
  const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

  test('keeps the order of its items, at most `concurrency` calls at once, leaving out undefined', async () => {
    let running = 0;
    let most = 0;
    const results: number[] = [];
    const items = Array.from({ length: 30 }, (_, i) => i);
    for await (const value of mapInOrder(items, 4, async (i) => {
      running++;
      most = Math.max(most, running);
      // Later items finish first: the order still follows the items.
      await new Promise((resolve) => setTimeout(resolve, (30 - i) % 7));
      running--;
      return i % 5 === 0 ? undefined : i * 10;
    })) {
      results.push(value);
    }
    expect(most).toBe(4);
    expect(results).toEqual(items.filter((i) => i % 5 !== 0).map((i) => i * 10));
  });

  test('pulls items only as calls finish, and stops pulling when the caller stops', async () => {
    let pulled = 0;
    async function* source() {
      for (let i = 0; i < 100; i++) {
        pulled++;
        yield i;
      }
    }
    for await (const value of mapInOrder(source(), 3, async (i) => {
      await tick();
      return i;
    })) {
      if (value === 1) break;
    }
    expect(pulled).toBeLessThanOrEqual(5);
  });

  test('a call that fails ends the iteration with its error, and no other failure goes unhandled', async () => {
    const seen: number[] = [];
    const run = async () => {
      for await (const value of mapInOrder([1, 2, 3, 4], 4, async (i) => {
        if (i >= 2) throw new Error(`failed ${i}`);
        return i;
      })) {
        seen.push(value);
      }
    };
    await expect(run()).rejects.toThrow('failed 2');
    expect(seen).toEqual([1]);
  });
});
