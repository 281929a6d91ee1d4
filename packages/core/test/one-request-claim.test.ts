import { describe, expect, test } from 'vitest';
import type { Lock } from '../src/index.js';
import { held, replica, scriptedClients } from './helpers/scripted-clients.js';

describe('tokens with the one-request claim, after a deleted record', () => {
  test('a deleted record, recreated by a client that never saw it: the next claim here goes on above the floor', async () => {
    const s = scriptedClients({}, { oneRequestClaim: true });
    const a = s.client();
    for (let i = 0; i < 5; i++) await (await a.acquire('k')).release();
    s.scripted.inner.documents.delete('k');
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
    const s = scriptedClients({}, { oneRequestClaim: true });
    const a = s.client();
    for (let i = 0; i < 5; i++) await (await a.acquire('k')).release();
    s.scripted.inner.documents.delete('k');
    s.scripted.nextClaim({ kind: 'lose-answer' });
    s.scripted.nextReadFails();
    let mine: Lock | undefined;
    void a.acquire('k').then((l) => (mine = l));
    expect(await s.time.until(() => mine !== undefined, 5_000)).toBe(true);
    expect(mine!.fencingToken).toBe(6);
  });
});

describe('a one-request claim that lands after it was settled (untrusted clocks)', () => {
  test('it holds the key at most one lease counted from when a waiter first sees it', async () => {
    const s = scriptedClients({ clock: undefined }, { oneRequestClaim: true });
    const clock = { mode: 'untrusted' as const, time: s.time.scheduler() };
    const a = s.client({ clock });
    s.scripted.nextClaim({ kind: 'apply-late' });
    await expect(a.tryAcquire('k')).rejects.toMatchObject({ maybeApplied: true });
    const sentAt = s.time.elapsed;
    await s.time.advance(100); // the client settles it: claims by version and releases
    await a.close();
    await s.time.advance(4_900);
    s.scripted.landLateClaims(); // lands 5 s after it was sent
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

describe('what a one-request claim of unknown outcome reports', () => {
  test('a claim that lands only after the re-read is reported as unknown, not as busy', async () => {
    const s = scriptedClients({}, { oneRequestClaim: true });
    s.scripted.nextClaim({ kind: 'apply-late' });
    await expect(s.client().tryAcquire('k')).rejects.toMatchObject({ maybeApplied: true });
  });
});

describe('a one-request claim whose answer was lost', () => {
  test('the waiter finds its own claim in the store and holds the lock (not a stranger to wait out)', async () => {
    const s = scriptedClients({}, { oneRequestClaim: true });
    const holder = await replica(s).acquire('k');
    let mine: Lock | undefined;
    void s
      .client()
      .acquire('k')
      .then((lock) => (mine = lock));
    await s.time.advance(10);
    s.scripted.nextClaim({ kind: 'lose-answer' });
    await holder.release();
    expect(await s.time.until(() => mine !== undefined, 2_000)).toBe(true);
    expect(held(mine)).toBe(true);
    expect(await replica(s).inspect('k')).toMatchObject({ state: 'held', fencingToken: mine!.fencingToken });
  });
});

describe('copies of one-request claims that land after their writer ended', () => {
  test('each is given back, one after another: the watch goes on after the first (sweep seed 607618)', async () => {
    const s = scriptedClients({ leaseMs: 3_000 }, { oneRequestClaim: true });
    const a = s.client();
    // Two claims of unknown outcome; the third wins the lock.
    s.scripted.nextClaim({ kind: 'apply-late' });
    s.scripted.nextClaim({ kind: 'apply-late' });
    let lock: Lock | undefined;
    void a.acquire('k', { waitMs: 5_000 }).then((l) => (lock = l));
    expect(await s.time.until(() => lock !== undefined, 5_000)).toBe(true);
    await lock!.release();
    const entry = () => replica(s).inspect('k');

    s.scripted.landNextLateClaim(); // the first copy takes the free key
    expect(await entry()).toMatchObject({ state: 'held' });
    await s.time.advance(1_200);
    expect(await entry()).toMatchObject({ state: 'free' }); // given back by the watch
    s.scripted.landNextLateClaim(); // then the second
    expect(await entry()).toMatchObject({ state: 'held' });
    await s.time.advance(1_200);
    expect(await entry()).toMatchObject({ state: 'free' }); // given back too, long before its lease ends
    expect(await replica(s).tryAcquire('k')).not.toBeNull();
  });
});
