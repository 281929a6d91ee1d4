import { afterEach, describe, expect, test } from 'vitest';
import { LockClient, LockConfigError, type LockStore, memoryStore } from '../src/index.js';

// `leaseMs: 30` (30 seconds meant) would renew every 10 ms. A lease under 1 s is refused, with a
// message that says the unit, before anything reaches the store.

/** A memory store that counts every call that would be a request. */
function countingStore(): { store: LockStore; requests: () => number } {
  const inner = memoryStore();
  let requests = 0;
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (
        typeof value !== 'function' ||
        !['read', 'write', 'claim', 'delete', 'list'].includes(String(property))
      )
        return value;
      return (...args: unknown[]) => {
        requests++;
        return value.apply(target, args);
      };
    },
  });
  return { store, requests: () => requests };
}

const clients: LockClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
function client(store: LockStore, leaseMs?: number): LockClient {
  const made = new LockClient(leaseMs === undefined ? { store } : { store, leaseMs });
  clients.push(made);
  return made;
}

const SECONDS_MEANT =
  /^leaseMs must be at least 1000 milliseconds, got 30\. It is in milliseconds: for a lease of 30 seconds, pass leaseMs: 30000\.$/;

describe('a lease under 1000 ms', () => {
  test('is refused by the constructor with a LockConfigError that names the unit', () => {
    const { store } = countingStore();
    expect(() => new LockClient({ store, leaseMs: 30 })).toThrow(LockConfigError);
    expect(() => new LockClient({ store, leaseMs: 30 })).toThrow(SECONDS_MEANT);
    expect(() => new LockClient({ store, leaseMs: 999 })).toThrow(/at least 1000 milliseconds, got 999/);
  });

  test('is refused per call (acquire, tryAcquire, withLock) before any request', async () => {
    const { store, requests } = countingStore();
    const locks = client(store);
    await expect(locks.acquire('k', { leaseMs: 30 })).rejects.toThrow(SECONDS_MEANT);
    await expect(locks.tryAcquire('k', { leaseMs: 30 })).rejects.toBeInstanceOf(LockConfigError);
    await expect(locks.withLock('k', () => 'ran', { leaseMs: 500 })).rejects.toThrow(/got 500/);
    expect(requests()).toBe(0);
  });

  test('is refused by extend(ms) too, before any request, and the lock stays held as it was', async () => {
    const { store, requests } = countingStore();
    const lock = await client(store).acquire('k');
    const before = requests();
    await expect(lock.extend(30)).rejects.toThrow(
      /^extend\(ms\) must be at least 1000 milliseconds, got 30\. It is in milliseconds: for a lease of 30 seconds, pass 30000\.$/,
    );
    expect(requests()).toBe(before);
    expect(lock.isHeld).toBe(true);
    await lock.extend(1000);
    await lock.release();
  });

  test('stops at 1000 ms: that lease, and a fail-closed one, are taken', async () => {
    const { store } = countingStore();
    const lock = await client(store, 1000).acquire('k');
    expect(lock.isHeld).toBe(true);
    await lock.release();
    const failClosed = await client(store).acquire('k', { leaseMs: Number.POSITIVE_INFINITY });
    expect(failClosed.expiresAt).toBeNull();
    await failClosed.release();
  });
});
