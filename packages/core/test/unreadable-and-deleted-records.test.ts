import { describe, expect, test } from 'vitest';
import type { Lock } from '../src/index.js';
import { replica, scriptedClients } from './helpers/scripted-clients.js';

// Records Latch cannot read, records with fields from a newer version, and records deleted
// behind Latch's back. Real client, scripted memory store, manual time.

describe('unreadable records, newer fields and deleted records', () => {
  test('forceRelease replaces an unreadable record and keeps its readable token', async () => {
    const s = scriptedClients();
    const locks = s.client();
    s.scripted.inner.documents.set('k', {
      version: 'v-bad',
      text: JSON.stringify({ latch: 1, token: 7, holder: { owner: 42 }, writeId: 'w' }),
    });
    await expect(locks.acquire('k', { waitMs: 0 })).rejects.toThrow(/forceRelease/);
    expect(await locks.forceRelease('k')).toBe(true);
    const lock = await locks.acquire('k', { waitMs: 0 });
    expect(lock.fencingToken).toBe(8);
  });

  test('fields a newer version wrote survive acquire, update and release', async () => {
    const s = scriptedClients();
    const locks = s.client();
    s.scripted.inner.documents.set('k', {
      version: 'v-new',
      text: JSON.stringify({ latch: 1, token: 3, holder: null, writeId: 'w', quota: { max: 5 } }),
    });
    const lock = await locks.acquire('k', { waitMs: 0 });
    await lock.update('x');
    await lock.release();
    expect(JSON.parse(s.scripted.inner.documents.get('k')!.text)).toMatchObject({
      quota: { max: 5 },
      token: 4,
    });
  });

  test('forceRelease keeps fields a newer version wrote', async () => {
    const s = scriptedClients();
    s.scripted.inner.documents.set('k', {
      version: 'v-new',
      text: JSON.stringify({
        latch: 1,
        token: 3,
        holder: { owner: 'o', lockId: 'l', acquiredAt: 1, renewedAt: 1, leaseMs: 10, expiresAt: 11 },
        writeId: 'w',
        quota: { max: 5 },
      }),
    });
    expect(await s.client().forceRelease('k')).toBe(true);
    expect(JSON.parse(s.scripted.inner.documents.get('k')!.text)).toMatchObject({ quota: { max: 5 } });
  });

  test('a deleted record does not make tokens go back for a client that saw them', async () => {
    const s = scriptedClients();
    const locks = s.client();
    for (let i = 0; i < 3; i++) await (await locks.acquire('k')).release();
    s.scripted.inner.documents.delete('k');
    const lock = await locks.acquire('k');
    expect(lock.fencingToken).toBe(4);
  });

  test('a hand-over from a resumed lease does not go below a token this client saw', async () => {
    const s = scriptedClients();
    const a = s.client();
    for (let i = 0; i < 5; i++) await (await a.acquire('k')).release();
    s.scripted.inner.documents.delete('k'); // a lifecycle rule
    const fresh = await replica(s).acquire('k'); // token 1, by a client that never saw 5
    const resumed = await a.resume(fresh.handle);
    let next: Lock | undefined;
    void a.acquire('k').then((l) => (next = l));
    await s.time.advance(10);
    await resumed.release(); // handed straight to the local waiter
    expect(await s.time.until(() => next !== undefined, 5_000)).toBe(true);
    expect(next!.fencingToken).toBeGreaterThan(5);
  });
});
