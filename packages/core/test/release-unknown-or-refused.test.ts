import { describe, expect, test } from 'vitest';
import { type Lock, type LockEvent, LockStoreError } from '../src/index.js';
import { held, replica, scriptedClients } from './helpers/scripted-clients.js';

describe('a release of unknown outcome, then a retry the store refused', () => {
  test.each([
    ['trusted', {}],
    ['untrusted', { clock: 'untrusted' as const }],
  ])('%s: the lock must not be held again while the first release can still land', async (_n, opts) => {
    const s = scriptedClients();
    const time = s.time;
    const clock =
      'clock' in opts ? { mode: 'untrusted' as const, time: time.scheduler() } : { time: time.scheduler() };
    const lock = await s.client({ clock }).acquire('k');
    s.scripted.nextWrite({ kind: 'apply-late' }); // the release: timed out, lands later
    s.scripted.nextWrite({ kind: 'refused' }); // its background retry: certainly refused
    await expect(lock.release()).rejects.toMatchObject({ maybeApplied: true });
    await time.advance(150); // the retry runs and is refused
    await s.scripted.landLate(); // the first release lands now: the key is free
    const other = await replica(s, { clock }).tryAcquire('k');
    expect(other).not.toBeNull();
    // Two Lock objects of one key, both held with live signals.
    expect(held(lock) && held(other!)).toBe(false);
  });
});

describe('a release by handle the store refused after taking the lock over', () => {
  test('rejects, and the lock is given back in the background: a fail-closed one is not held for ever', async () => {
    const s = scriptedClients();
    const lock = await s.client().acquire('k', { leaseMs: Number.POSITIVE_INFINITY });
    const other = s.client();
    // The takeover's renewal lands; the release after it is refused for certain.
    s.scripted.nextWrite({ kind: 'refused' }, (record) => record?.holder === null);
    await expect(other.release('k', lock.handle)).rejects.toBeInstanceOf(LockStoreError);
    await s.time.advance(5_000);
    expect(held((await replica(s).tryAcquire('k')) ?? undefined)).toBe(true);
  });
});

describe('a release the store refused while close() joined it', () => {
  test('ends the lock as soon as close’s try frees the key: it is never held on a lease that ended', async () => {
    const s = scriptedClients();
    const a = s.client();
    const lock = await a.acquire('k');
    s.scripted.nextWrite({ kind: 'refused' }); // the caller's release: certainly not applied
    const releasing = lock.release().catch((error: unknown) => error);
    const closing = a.close(); // joins the release on its way, and sends it again once refused
    expect(await releasing).toBeInstanceOf(LockStoreError);
    await s.time.advance(1); // close's try lands: the key is free
    const other = await replica(s).tryAcquire('k');
    expect(held(other ?? undefined)).toBe(true);
    expect(held(lock)).toBe(false);
    await s.time.advance(10_000);
    await closing;
  });
});

describe('a fail-closed hand-over of unknown outcome whose waiter gave up', () => {
  test.each([
    ['lands after the waiter left', 'apply-late' as const],
    ['landed, its answer and the re-read were lost', 'lose-answer' as const],
  ])(
    '%s: the key is not held for ever by the lock id of the waiter that left; the next waiter gets it',
    async (_n, kind) => {
      const s = scriptedClients({ leaseMs: Number.POSITIVE_INFINITY });
      const locks = s.client();
      const first = await locks.acquire('k');
      const leaving = new AbortController();
      const gaveUp = locks.acquire('k', { signal: leaving.signal }).catch((e: unknown) => e);
      let next: Lock | undefined;
      let nextError: unknown;
      void locks.acquire('k').then(
        (lock) => (next = lock),
        (e: unknown) => (nextError = e),
      );
      await s.time.advance(1);
      s.scripted.nextWrite({ kind }, (record) => record?.holder !== null); // the hand-over
      s.scripted.nextReadFails(); // the read that would resolve it fails: its outcome stays unknown
      await expect(first.release()).rejects.toMatchObject({ maybeApplied: true });
      leaving.abort(new Error('caller left'));
      await gaveUp;
      await s.time.advance(10); // the client settles the abandoned hand-over
      await s.scripted.landLate(); // (apply-late: the hand-over lands only now)
      await s.time.advance(60_000);
      const stranded = next === undefined && nextError === undefined;
      await locks.close();
      const info = await replica(s).inspect('k');
      expect({ stranded, state: info.state }).toEqual({ stranded: false, state: 'free' });
    },
  );
});

describe('a release({ data }) the store certainly refused', () => {
  test('is not stored later over an update the caller made after the refusal', async () => {
    const s = scriptedClients();
    const lock = await s.client().acquire('k');
    s.scripted.nextWrite({ kind: 'refused' });
    const error = await lock.release({ data: 'refused release' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as LockStoreError).maybeApplied).toBe(false); // reported as not applied
    expect(lock.isHeld).toBe(true);
    await lock.update('later update'); // succeeds: the caller still holds the lock
    await s.time.advance(1_000);
    const info = await replica(s).inspect('k');
    // "a write reported as not applied is never visible later; nothing is reverted silently"
    expect(info.data).not.toBe('refused release');
  });
});

describe('the heartbeat of a releasing lock', () => {
  test('a release that landed unseen is not reported as lost when the heartbeat comes first', async () => {
    const events: LockEvent['type'][] = [];
    let onLost = 0;
    const s = scriptedClients({ leaseMs: 1000, onEvent: (event) => events.push(event.type) });
    const lock = await s.client().acquire('k', { onLost: () => onLost++ });
    s.scripted.nextWrite({ kind: 'lose-answer' });
    s.scripted.nextReadFails();
    await expect(lock.release()).rejects.toBeInstanceOf(LockStoreError);
    await s.time.advance(3_500);
    expect({ events, onLost, aborted: lock.signal.aborted }).toEqual({
      events: ['acquired', 'released'],
      onLost: 0,
      aborted: false,
    });
  });
});
