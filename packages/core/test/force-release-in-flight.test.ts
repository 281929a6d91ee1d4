import { describe, expect, test } from 'vitest';
import type { Lock } from '../src/index.js';
import { held, replica, scriptedClients } from './helpers/scripted-clients.js';

// A forceRelease in the holder's own client ends its locks at once; a claim or a hand-over of
// that client still on its way then must not become a lock either: it may have landed before
// the forceRelease freed it, and another client may hold the key by the time it is answered.

/** A client whose lock `first` came from a claim (so its release hands over with a write), and a caller queued behind it. */
async function holderWithWaiter() {
  const s = scriptedClients({ localTurnMs: Number.POSITIVE_INFINITY });
  const a = s.client();
  const first = await a.acquire('k');
  let next: Lock | undefined;
  void a.acquire('k').then((lock) => (next = lock));
  await s.time.advance(1);
  return { s, a, first, next: () => next };
}

describe('forceRelease in the holder’s own client, with a write of it still on its way', () => {
  test('a hand-over answered after it gives the waiter no lock; the waiter gets the key again after the new holder', async () => {
    const { s, a, first, next } = await holderWithWaiter();
    s.scripted.nextWrite({ kind: 'slow', ms: 500 }); // the hand-over lands at once, answered in 500 ms
    const releasing = first.release().catch(() => undefined);
    await s.time.advance(1);
    expect(await a.forceRelease('k')).toBe(true);
    const other = (await replica(s).tryAcquire('k'))!;
    expect(held(other)).toBe(true);
    await s.time.advance(600); // the hand-over's answer arrives
    await releasing;
    expect(next()).toBeUndefined();
    expect(held(other)).toBe(true);
    await other.release();
    await s.time.advance(1_000);
    expect(next()?.fencingToken).toBeGreaterThan(other.fencingToken);
  });

  test('a claim of its poller answered after it gives the waiter no lock', async () => {
    const s = scriptedClients({ localTurnMs: Number.POSITIVE_INFINITY });
    const a = s.client();
    const b = replica(s);
    const bLock = await b.acquire('k');
    let mine: Lock | undefined;
    void a.acquire('k').then((lock) => (mine = lock));
    await s.time.advance(1);
    s.scripted.nextWrite({ kind: 'slow', ms: 500 }); // the poller's next claim lands at once, answered in 500 ms
    await bLock.release();
    await s.time.advance(250); // the poller claims
    expect(await a.forceRelease('k')).toBe(true);
    const other = (await replica(s).tryAcquire('k'))!;
    await s.time.advance(600);
    expect(mine).toBeUndefined();
    expect(held(other)).toBe(true);
  });
});
