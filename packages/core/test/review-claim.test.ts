import { describe, expect, test } from 'vitest';
import { type Lock, LockClient, type LockClientOptions } from '../src/index.js';
import { ManualTime } from './helpers/manual-time.js';
import { oneRequestClaimStore } from './helpers/one-request-claim-store.js';

function setup(options: Partial<LockClientOptions> = {}) {
  const time = new ManualTime();
  const dynamo = oneRequestClaimStore(time);
  const client = (extra: Partial<LockClientOptions> = {}, store = dynamo.store) =>
    new LockClient({
      store,
      leaseMs: 10_000,
      retry: { attempts: 1 },
      pollMs: 200,
      clock: { time: time.scheduler() },
      ...options,
      ...extra,
    });
  return { time, dynamo, client };
}

describe('holds up (no regression needed to fail): tokens with the one-request claim', () => {
  test('a deleted record, recreated by a client that never saw it: the next claim here goes on above the floor', async () => {
    const s = setup();
    const a = s.client();
    for (let i = 0; i < 5; i++) await (await a.acquire('k')).release();
    s.dynamo.inner.documents.delete('k');
    const b = s.client();
    const other = await b.acquire('k');
    expect(other.fencingToken).toBe(1);
    let mine: Lock | undefined;
    void a.acquire('k').then((l) => (mine = l));
    await s.time.advance(10);
    await other.release();
    expect(await s.time.until(() => mine !== undefined, 5_000)).toBe(true);
    expect(mine!.fencingToken).toBeGreaterThan(5);
  });

  test('a deleted record: a claim of unknown outcome and its adoption keep the floor', async () => {
    const s = setup();
    const a = s.client();
    for (let i = 0; i < 5; i++) await (await a.acquire('k')).release();
    s.dynamo.inner.documents.delete('k');
    s.dynamo.nextClaim({ kind: 'lose-answer' });
    s.dynamo.nextReadFails();
    let mine: Lock | undefined;
    void a.acquire('k').then((l) => (mine = l));
    expect(await s.time.until(() => mine !== undefined, 5_000)).toBe(true);
    expect(mine!.fencingToken).toBe(6);
  });
});

describe('review: a one-request claim that lands after it was settled (untrusted clocks)', () => {
  test('it holds the key at most one lease counted from when a waiter first sees it', async () => {
    const s = setup({ clock: undefined });
    const clock = { mode: 'untrusted' as const, time: s.time.scheduler() };
    const a = s.client({ clock });
    s.dynamo.nextClaim({ kind: 'apply-late' });
    await expect(a.tryAcquire('k')).rejects.toMatchObject({ maybeApplied: true });
    const sentAt = s.time.elapsed;
    await s.time.advance(100); // the client settles it: claims by version and releases
    await a.close();
    await s.time.advance(4_900);
    s.dynamo.landLateClaims(); // lands 5 s after it was sent
    const landedAt = s.time.elapsed;
    const b = s.client({ clock });
    let taken: Lock | undefined;
    void b.acquire('k').then((l) => (taken = l));
    expect(await s.time.until(() => taken !== undefined, 30_000)).toBe(true);
    // README: with untrusted clocks, at most one lease counted from when a waiter first sees it.
    expect(sentAt).toBeLessThan(landedAt);
    expect(s.time.elapsed - landedAt).toBeLessThanOrEqual(10_000 + 2 * 200);
  });
});
