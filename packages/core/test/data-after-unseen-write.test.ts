import { describe, expect, test } from 'vitest';
import { inspectLock } from '../src/client/lock.js';
import { type Lock, LockStoreError } from '../src/index.js';
import { held, replica, scriptedClients } from './helpers/scripted-clients.js';

// A release or update whose earlier attempt with data landed unseen (its answer and the read-back
// lost): which data the store keeps once a later write of the same lock, or of another holder,
// has come.

const FAIL_CLOSED = Number.POSITIVE_INFINITY;

describe('a release whose earlier attempt with other data landed unseen', () => {
  /** The release stores D1, its answer and the read-back are lost; then release with D2. */
  async function releaseTwice(s: ReturnType<typeof scriptedClients>, lock: Lock) {
    s.scripted.nextWrite({ kind: 'lose-answer' });
    s.scripted.nextReadFails();
    await expect(lock.release({ data: 'D1' })).rejects.toMatchObject({ maybeApplied: true });
    const second = await lock.release({ data: 'D2' }).then(
      () => 'resolved',
      () => 'threw',
    );
    const info = await replica(s).inspect('k');
    return { second, data: info.data };
  }

  test('a lock: the later release stores its data (or throws)', async () => {
    const s = scriptedClients();
    const lock = await s.client().acquire('k');
    const { second, data } = await releaseTwice(s, lock);
    if (second === 'resolved') expect(data).toBe('D2');
    expect((await replica(s).inspect('k')).state).toBe('free');
  });

  test('a hand-over to a local waiter: the later one stores its data (or throws)', async () => {
    const s = scriptedClients({ localTurnMs: FAIL_CLOSED });
    const locks = s.client();
    const first = await locks.acquire('k');
    let next: Lock | undefined;
    void locks.acquire('k').then((lock) => (next = lock));
    await s.time.advance(1);
    const { second, data } = await releaseTwice(s, first);
    if (second === 'resolved') expect(data).toBe('D2');
    await s.time.advance(1);
    expect(held(next)).toBe(true);
  });

  test('a slot: the later release stores its data (or throws)', async () => {
    const s = scriptedClients();
    const lock = await s.client().acquire('k', { limit: 2 });
    const { second, data } = await releaseTwice(s, lock);
    if (second === 'resolved') expect(data).toBe('D2');
  });
});

describe('a slot release with lockAtLeastMs whose first attempt landed unseen (simulator seed 200458)', () => {
  // Slot holder A (limit 2) releases with data 'A' inside its minimum hold: the release is a
  // write that shortens A's slot and stores 'A'. It lands, its answer and the read-back are
  // lost: unknown outcome, retried in the background. Meanwhile holder B (another client)
  // stores 'B' with update() and is told it is stored. A's retry finds its slot still there
  // (written by its own landed attempt), rebases on B's record and stores 'A' again: B's
  // acknowledged data is silently replaced by older data.
  test("the retried release does not store its data again over another holder's later update", async () => {
    const s = scriptedClients();
    const b = await replica(s).acquire('k', { limit: 2 });
    const a = await s.client().acquire('k', { limit: 2, lockAtLeastMs: 10_000 });
    s.scripted.nextWrite({ kind: 'lose-answer' });
    s.scripted.nextReadFails();
    await expect(a.release({ data: 'A' })).rejects.toMatchObject({ maybeApplied: true });
    expect((await replica(s).inspect('k')).data).toBe('A'); // it landed
    await b.update('B');
    expect((await replica(s).inspect('k')).data).toBe('B');
    await s.time.advance(1_000); // A's release is retried in the background
    expect((await replica(s).inspect('k')).data).toBe('B');
    expect(inspectLock(a)).toMatchObject({ phase: 'released', releasePending: false });
  });

  // The memory of an unseen write's data belongs to that call: a later call from user code with
  // the same data asks for it to be stored now, over another holder's write since.
  test.each(['update', 'release'] as const)(
    'after an unseen update and another holder’s write, a new %s with the same data stores it',
    async (call) => {
      const s = scriptedClients();
      const b = await replica(s).acquire('k', { limit: 2 });
      const a = await s.client().acquire('k', { limit: 2 });
      s.scripted.nextWrite({ kind: 'lose-answer' });
      s.scripted.nextReadFails();
      await expect(a.update('A')).rejects.toBeInstanceOf(LockStoreError);
      expect((await replica(s).inspect('k')).data).toBe('A'); // it landed
      await b.update('B');
      if (call === 'update') await a.update('A');
      else await a.release({ data: 'A' });
      expect((await replica(s).inspect('k')).data).toBe('A');
    },
  );

  test('a new release with other data, after the unseen one, still stores its data', async () => {
    const s = scriptedClients();
    const b = await replica(s).acquire('k', { limit: 2 });
    const a = await s.client().acquire('k', { limit: 2, lockAtLeastMs: 10_000 });
    s.scripted.nextWrite({ kind: 'lose-answer' });
    s.scripted.nextReadFails();
    await expect(a.release({ data: 'A' })).rejects.toMatchObject({ maybeApplied: true });
    await b.update('B');
    await a.release({ data: 'A2' });
    expect((await replica(s).inspect('k')).data).toBe('A2');
  });

  test('a lock (limit 1): the retried release keeps its data, and the key frees at the end of the hold', async () => {
    const s = scriptedClients();
    const a = await s.client().acquire('k', { lockAtLeastMs: 10_000 });
    s.scripted.nextWrite({ kind: 'lose-answer' });
    s.scripted.nextReadFails();
    await expect(a.release({ data: 'A' })).rejects.toMatchObject({ maybeApplied: true });
    // Nobody else can write the record while A's shortened lease runs: nothing to overwrite.
    const other = replica(s);
    expect(await other.tryAcquire('k')).toBeNull();
    await s.time.advance(1_000);
    expect(inspectLock(a)).toMatchObject({ phase: 'released', releasePending: false });
    expect((await replica(s).inspect('k')).data).toBe('A');
    await s.time.advance(10_000); // past the hold, as the taker measures it from its first sight
    const c = await other.tryAcquire('k');
    expect(c).not.toBeNull();
    expect((await replica(s).inspect('k')).data).toBe('A');
  });
});
