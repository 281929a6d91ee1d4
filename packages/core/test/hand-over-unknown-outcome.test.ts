import { describe, expect, test } from 'vitest';
import { type Lock, LockStoreError } from '../src/index.js';
import { held, replica, scriptedClients } from './helpers/scripted-clients.js';
import { twoCallersAfterAnother } from './helpers/two-callers.js';

// Hand-overs (a lock passing its lease straight to a waiter) whose outcome is unknown: the
// answer lost, the retry refused, the landing too late to trust. Each runs the real client over a
// scripted memory store on a manual timeline, so the fault lands exactly where the case needs it.

describe('a hand-over whose answer was lost counts its lease from the hand-over', () => {
  test('the adopted lock is not held any more when another client takes over at the stored expiry', async () => {
    // No local turns: the retry hands the lock over again instead of yielding it to the store.
    const s = scriptedClients({ heartbeatMs: false, localTurnMs: Number.POSITIVE_INFINITY });
    const locks = s.client();
    const first = await locks.acquire('k');
    let second: Lock | undefined;
    void locks.acquire('k').then((lock) => (second = lock));
    await s.time.advance(1);
    // The hand-over lands, its answer is lost, the re-read fails, and the next retries are refused
    // for a few seconds: the waiter can only learn of its lease much later.
    s.scripted.nextWrite({ kind: 'lose-answer' }, (record) => record?.holder !== null);
    s.scripted.nextReadFails();
    for (let i = 0; i < 4; i++) s.scripted.nextWrite({ kind: 'refused' });
    await expect(first.release()).rejects.toBeInstanceOf(LockStoreError);
    const other = replica(s);
    let taken: Lock | undefined;
    void other.acquire('k').then((lock) => (taken = lock));
    expect(await s.time.until(() => taken !== undefined, 20_000)).toBe(true);
    expect(held(second)).toBe(false);
    expect(taken!.fencingToken).toBeGreaterThan(2);
  });
});

describe('a hand-over that lands too late does not strand the waiter', () => {
  test('the waiter still gets the lock', async () => {
    const s = scriptedClients({ leaseMs: 2_000, heartbeatMs: false });
    const locks = s.client();
    const first = await locks.acquire('k');
    let second: Lock | undefined;
    void locks.acquire('k').then((lock) => (second = lock));
    await s.time.advance(1);
    s.scripted.nextWrite({ kind: 'slow', ms: 2_500 }, (record) => record?.holder !== null);
    const released = first.release();
    await s.time.advance(3_000);
    await released;
    expect(await s.time.until(() => second !== undefined, 30_000)).toBe(true);
    expect(held(second)).toBe(true);
  });
});

describe('a hand-over of unknown outcome whose handing lock is lost before its release lands', () => {
  test('the landed hand-over to a waiter that left is given back, not kept (for ever, when the waiter asked for a fail-closed lock)', async () => {
    const s = scriptedClients({ heartbeatMs: false, localTurnMs: Number.POSITIVE_INFINITY });
    const locks = s.client();
    const first = await locks.acquire('k', { leaseMs: 1_000 });
    const leaving = new AbortController();
    const waiting = locks
      .acquire('k', { leaseMs: Number.POSITIVE_INFINITY, signal: leaving.signal })
      .catch((error: unknown) => error);
    await s.time.advance(1);
    // The hand-over lands, but its answer is lost and so is the re-read: outcome unknown.
    s.scripted.nextWrite({ kind: 'lose-answer' }, (record) => record?.holder?.leaseMs === null);
    s.scripted.nextReadFails();
    // Every retry of the release fails until the handing lock's lease runs out.
    for (let i = 0; i < 40; i++) s.scripted.nextReadFails();
    for (let i = 0; i < 40; i++) s.scripted.nextWrite({ kind: 'refused' });
    await expect(first.release()).rejects.toBeInstanceOf(LockStoreError);
    leaving.abort(new Error('the caller gave up'));
    await waiting;
    await s.time.advance(5_000); // the handing lock's lease runs out while the store fails
    expect(held(first)).toBe(false);
    s.scripted.clearPlans();
    await s.time.advance(5_000);
    // Nobody holds the lock: another client gets it.
    const other = await replica(s).tryAcquire('k');
    expect(other).not.toBeNull();
  });
});

describe('a hand-over of unknown outcome that its retry finds landed, too late to trust', () => {
  test('is given back at once, not left held by nobody until it expires', async () => {
    const s = scriptedClients({ localTurnMs: Number.POSITIVE_INFINITY });
    const locks = s.client();
    const first = await locks.acquire('k'); // a 10 s lease
    let second: Lock | undefined;
    void locks.acquire('k', { leaseMs: 1_600 }).then((lock) => (second = lock));
    await s.time.advance(1);
    // The hand-over lands unseen; the retries at +100, +300 and +700 ms are refused, and the one
    // at +1,500 ms finds it: past the point where a 1.6 s lease can be trusted.
    s.scripted.nextWrite({ kind: 'lose-answer' }, (record) => record?.holder != null);
    s.scripted.nextReadFails();
    for (let i = 0; i < 3; i++) s.scripted.nextWrite({ kind: 'refused' }, (record) => record?.holder != null);
    await expect(first.release()).rejects.toBeInstanceOf(LockStoreError);
    await s.time.advance(1_510);
    // Before it would expire (at +1,600 ms), the key is free again or the waiter holds it anew.
    const other = await replica(s).tryAcquire('k');
    expect(held(second) || other !== null).toBe(true);
  });

  test('counts its lease from the hand-over’s first send, not from the waiter’s first claim', async () => {
    const s = scriptedClients({ localTurnMs: Number.POSITIVE_INFINITY }, { oneRequestClaim: true });
    const { first, second } = await twoCallersAfterAnother(s, () => {
      s.scripted.nextClaim({ kind: 'arrives-late', ms: 300 }); // the first caller's try
      s.scripted.nextClaim({ kind: 'arrives-late', ms: 600 }); // the waiter's first claim, sent at once
    });
    await s.time.advance(9_000); // the first caller holds for 9 s (renewed), the waiter waits
    s.scripted.nextWrite({ kind: 'lose-answer' }, (record) => record?.holder != null);
    s.scripted.nextReadFails();
    await expect(first.release()).rejects.toBeInstanceOf(LockStoreError);
    const handedToken = JSON.parse(s.scripted.inner.documents.get('k')!.text).holder.token as number;
    // The retry finds the hand-over landed: a fresh 10 s lease, trusted and given to the waiter.
    await s.time.advance(200);
    expect(held(second())).toBe(true);
    expect(second()!.fencingToken).toBe(handedToken);
  });
});
