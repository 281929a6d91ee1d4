import { describe, expect, test } from 'vitest';
import { type Lock, LockLostError, LockNotHeldError, LockStoreError } from '../src/index.js';
import { held, replica, scriptedClients } from './helpers/scripted-clients.js';

// What user code does in the client that holds (or is claiming) a key: resume the lock's own
// handle there, or forceRelease the key there while a claim of that client is on its way.

describe('resume(handle) in the client that holds that lock', () => {
  test('returns the same Lock: no second Lock of one acquisition, and a local waiter waits for it', async () => {
    const s = scriptedClients({ localTurnMs: Number.POSITIVE_INFINITY });
    const a = s.client();
    const lock = await a.acquire('k');
    const resumed = await a.resume(lock.handle);
    expect(resumed === lock).toBe(true); // not toBe: printing a Lock reads its client
    let next: Lock | undefined;
    void a.acquire('k').then((got) => (next = got));
    await s.time.advance(1_000);
    expect(next).toBeUndefined();
    await resumed.release();
    await s.time.advance(1);
    expect(held(lock)).toBe(false);
    expect(held(next)).toBe(true);
  });

  test('of a lock resumed elsewhere and released there since, is refused: the Lock here learns it lost it', async () => {
    const s = scriptedClients();
    const a = s.client();
    const lock = await a.acquire('k');
    const handle = lock.handle;
    const elsewhere = await replica(s).resume(handle);
    await elsewhere.release();
    await expect(a.resume(handle)).rejects.toBeInstanceOf(LockNotHeldError);
    expect(held(lock)).toBe(false);
  });

  test('lost while its renewal is on its way (a forceRelease here) gives no lost Lock', async () => {
    const s = scriptedClients();
    const a = s.client();
    const lock = await a.acquire('k');
    s.scripted.nextWrite({ kind: 'slow', ms: 500 }); // the renewal lands at once, answered in 500 ms
    const resuming = a.resume(lock.handle);
    resuming.catch(() => undefined);
    await s.time.advance(1);
    expect(await a.forceRelease('k')).toBe(true);
    await s.time.advance(600);
    await expect(resuming).rejects.toBeInstanceOf(LockLostError);
    expect(held(lock)).toBe(false);
  });

  test('lost by the clock while its renewal is on its way gives no lost Lock', async () => {
    const s = scriptedClients();
    const a = s.client();
    const lock = await a.acquire('k');
    s.scripted.nextWrite({ kind: 'slow', ms: 15_000 }); // lands at once, answered after the 10 s lease
    const resuming = a.resume(lock.handle);
    resuming.catch(() => undefined);
    await s.time.advance(15_001);
    await expect(resuming).rejects.toBeInstanceOf(LockLostError);
    expect(held(lock)).toBe(false);
  });

  test("the resume's onLost is called on a loss, and one that throws breaks nothing", async () => {
    const s = scriptedClients();
    const a = s.client();
    const lock = await a.acquire('k');
    const seen: unknown[] = [];
    const resumed = await a.resume(lock.handle, {
      onLost: (error) => {
        seen.push(error);
        throw new Error('a broken hook');
      },
    });
    // A throw escaping the abort listener would be an uncaught exception: vitest fails the run.
    expect(await a.forceRelease('k')).toBe(true);
    await s.time.advance(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(LockLostError);
    expect(held(resumed)).toBe(false);
    const other = await replica(s).tryAcquire('k');
    expect(held(other ?? undefined)).toBe(true);
  });

  test('two resumes of one handle racing in one client get the same Lock', async () => {
    const s = scriptedClients();
    const holder = await replica(s).acquire('k');
    const b = s.client();
    // The first resume's renewal lands at once and is answered in 500 ms; the second reads the
    // record meanwhile (it shows the first's renewal) and renews after it.
    s.scripted.nextWrite({ kind: 'slow', ms: 500 });
    const first = b.resume(holder.handle);
    await s.time.advance(1);
    const second = b.resume(holder.handle);
    await s.time.advance(600);
    const [one, two] = await Promise.all([first, second]);
    expect(two === one).toBe(true);
    expect(held(one)).toBe(true);
  });
});

describe('forceRelease in the holder’s own client', () => {
  test('of unknown outcome ends its locks at once: when it lands later, the next holder is alone', async () => {
    const s = scriptedClients();
    const a = s.client();
    const lock = await a.acquire('k');
    s.scripted.nextWrite({ kind: 'apply-late' }); // the free record is held back, the answer lost
    const forcing = a.forceRelease('k');
    await expect(forcing).rejects.toBeInstanceOf(LockStoreError);
    expect(held(lock)).toBe(false);
    await s.scripted.landLate();
    await s.time.advance(100); // the background settling of the lease it ended, racing the late write
    const other = (await replica(s).tryAcquire('k'))!;
    expect(held(other)).toBe(true);
    expect(held(lock)).toBe(false);
  });

  test('of unknown outcome that never lands gives the lease of the locks it ended back', async () => {
    const s = scriptedClients();
    const a = s.client();
    await a.acquire('k');
    s.scripted.nextWrite({ kind: 'apply-late' }); // never landed
    await expect(a.forceRelease('k')).rejects.toBeInstanceOf(LockStoreError);
    await s.time.advance(100); // settling, in the background
    const other = await replica(s).tryAcquire('k'); // long before the 10 s lease ran out
    expect(held(other ?? undefined)).toBe(true);
  });

  test('that the store refused keeps giving a fail-closed lock it ended back until the store answers', async () => {
    const s = scriptedClients();
    const unsettled: string[] = [];
    const a = s.client({ onEvent: (event) => event.type === 'unsettled' && unsettled.push(event.key) });
    const lock = await a.acquire('k', { leaseMs: Number.POSITIVE_INFINITY });
    s.scripted.nextReadFails(); // the forceRelease's look: certainly sent nothing
    s.scripted.nextReadFails(); // the first try to give the ended lock's lease back
    await expect(a.forceRelease('k')).rejects.toBeInstanceOf(LockStoreError);
    expect(held(lock)).toBe(false);
    await s.time.advance(5_000); // tried again in the background: nobody else ever frees it
    const other = await replica(s).tryAcquire('k');
    expect(held(other ?? undefined)).toBe(true);
    expect(unsettled).toEqual(['k']); // the failure was reported, once
  });

  test('that the store refused goes on giving a fail-closed lock back after close(), once the store answers again (sweep seed 602110)', async () => {
    const s = scriptedClients();
    const unsettled: string[] = [];
    const a = s.client({ onEvent: (event) => event.type === 'unsettled' && unsettled.push(event.key) });
    const lock = await a.acquire('k', { leaseMs: Number.POSITIVE_INFINITY });
    // The store is out of reach for a while: the forceRelease's look and every give-back fail.
    for (let i = 0; i < 40; i++) s.scripted.nextReadFails();
    await expect(a.forceRelease('k')).rejects.toBeInstanceOf(LockStoreError);
    expect(held(lock)).toBe(false);
    let closed = false;
    void a.close().then(() => (closed = true));
    expect(await s.time.until(() => closed, 30_000)).toBe(true); // close() does not wait for the store
    expect(await replica(s).tryAcquire('k')).toBeNull(); // still held: the store was never reached
    s.scripted.clearPlans(); // the store answers again
    await s.time.advance(10_000);
    const other = await replica(s).tryAcquire('k');
    expect(held(other ?? undefined)).toBe(true);
    expect(unsettled).toEqual(['k', 'k']); // reported when it first failed, and as close() returned
  });

  test('a tryAcquire claim answered after it gives the caller no lock', async () => {
    const s = scriptedClients();
    const a = s.client();
    s.scripted.nextWrite({ kind: 'slow', ms: 500 }); // the claim lands at once, answered in 500 ms
    const trying = a.tryAcquire('k');
    await s.time.advance(1);
    expect(await a.forceRelease('k')).toBe(true);
    const other = (await replica(s).tryAcquire('k'))!;
    await s.time.advance(600);
    expect(await trying).toBeNull();
    expect(held(other)).toBe(true);
  });

  test('a resume whose renewal is answered after it gives the caller no lock', async () => {
    const s = scriptedClients();
    const holder = await replica(s).acquire('k');
    const b = s.client();
    s.scripted.nextWrite({ kind: 'slow', ms: 500 }); // the renewal lands at once, answered in 500 ms
    const resuming = b.resume(holder.handle);
    resuming.catch(() => undefined);
    await s.time.advance(1);
    expect(await b.forceRelease('k')).toBe(true);
    const other = (await replica(s).tryAcquire('k'))!;
    await s.time.advance(600);
    await expect(resuming).rejects.toBeInstanceOf(LockNotHeldError);
    expect(held(other)).toBe(true);
  });
});

test("a campaign's lock resumed in its client: the client closing ends the term, no loss for the resume's onLost", async () => {
  const s = scriptedClients();
  const a = s.client();
  let term: Lock | undefined;
  a.campaign('leader', {
    onElected: (lock) => {
      term = lock;
    },
  });
  await s.time.until(() => term !== undefined, 1_000);
  const lost: unknown[] = [];
  const resumed = await a.resume(term!.handle, { onLost: (error) => lost.push(error) });
  expect(resumed === term).toBe(true);
  const closing = a.close();
  await s.time.advance(1_000);
  await closing;
  expect(term!.signal.aborted).toBe(true); // the term ended, for the client's closing
  expect(lost).toEqual([]);
});
