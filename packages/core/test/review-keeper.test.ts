import { describe, expect, test } from 'vitest';
import { newContender } from '../src/engine/lease-engine.js';
import { type Lock, type LockStore, LockStoreError } from '../src/index.js';
import type { LockRecord, WriteCondition } from '../src/store.js';
import { held, replica, scriptedClients } from './helpers/scripted-clients.js';

// Found by a second independent review: a fail-closed key held for ever (a shortening write the
// store refused; a forceRelease answered after its free record landed), and a
// later release's data lost to an earlier release of the same lock that had landed unseen.

const FAIL_CLOSED = Number.POSITIVE_INFINITY;

describe('a shortening write the store certainly refused', () => {
  test('extend(finite) of a fail-closed lock, refused: the lock stays held with its old deadline', async () => {
    const s = scriptedClients({ leaseMs: FAIL_CLOSED });
    const lock = await s.client().acquire('k');
    s.scripted.nextWrite({ kind: 'refused' });
    await expect(lock.extend(1_000)).rejects.toBeInstanceOf(LockStoreError);
    await s.time.advance(5_000);
    expect(held(lock)).toBe(true);
    expect(lock.expiresAt).toBeNull();
    await lock.release();
    expect((await replica(s).inspect('k')).state).toBe('free');
  });

  test('extend(shorter) of a finite lock, refused: the lock is renewed as before, not lost', async () => {
    const s = scriptedClients({ leaseMs: 10_000 });
    const lock = await s.client().acquire('k');
    s.scripted.nextWrite({ kind: 'refused' });
    await expect(lock.extend(1_000)).rejects.toBeInstanceOf(LockStoreError);
    await s.time.advance(5_000);
    expect(held(lock)).toBe(true);
  });

  test('refused only after the lowered deadline passed: the lock is lost, and its fail-closed lease given back', async () => {
    const s = scriptedClients({ leaseMs: FAIL_CLOSED });
    let refuseSlowly = false;
    const inner = s.scripted.inner;
    const store: LockStore = {
      ...inner,
      write: async (key: string, record: LockRecord, condition: WriteCondition) => {
        if (!refuseSlowly) return inner.write(key, record, condition);
        refuseSlowly = false;
        await new Promise((resolve) => s.time.schedule(() => resolve(undefined), 2_000));
        throw new LockStoreError('SlowDown', { retryable: true });
      },
    };
    const locks = s.client({}, store);
    const lock = await locks.acquire('k');
    refuseSlowly = true;
    const extending = lock.extend(1_000).catch((e: unknown) => e);
    await s.time.advance(1_500); // the lowered deadline passes while the write is on its way
    expect(held(lock)).toBe(false);
    await s.time.advance(1_000); // refused: the store still holds the fail-closed lease
    expect(await extending).toBeInstanceOf(LockStoreError);
    await s.time.advance(1_000);
    await locks.close();
    expect((await replica(s).inspect('k')).state).toBe('free');
  });
});

test("a claim after another client's forceRelease reads the record, though this client's own write left it held", async () => {
  const s = scriptedClients({ leaseMs: FAIL_CLOSED });
  const a = s.client();
  const terms = { leaseMs: FAIL_CLOSED };
  const first = await a.engine.claim('k', newContender('first', terms));
  expect(first.lease).not.toBeNull();
  expect(await replica(s).forceRelease('k')).toBe(true);
  const second = await a.engine.claim('k', newContender('second', terms));
  expect(second.lease?.lockId).toBe('second');
});

test('forceRelease answered after its free record landed: no lock of its own client is left holding a lease nobody keeps', async () => {
  const s = scriptedClients({ leaseMs: FAIL_CLOSED });
  const holder = await replica(s).acquire('k');
  const a = s.client();
  s.scripted.nextWrite({ kind: 'slow', ms: 500 }, (record) => record?.holder === null); // the free record
  const freeing = a.forceRelease('k');
  await s.time.advance(10); // it has landed; its answer is on its way
  // Whatever the client answers meanwhile, a lock it hands out must keep the key, and one it
  // does not hand out must leave nothing held in the store.
  const early = await a.tryAcquire('k');
  const waiting = a.acquire('k');
  await s.time.advance(600);
  expect(await freeing).toBe(true);
  expect(held(holder)).toBe(true); // (it learns of the forceRelease at its next look)
  const taken = early ?? (await waiting);
  expect(held(taken)).toBe(true);
  const info = await replica(s).inspect('k');
  expect(info.state === 'held' && info.fencingToken).toBe(taken.fencingToken);
  await taken.release();
  if (early) await (await waiting).release();
  expect((await replica(s).inspect('k')).state).toBe('free');
});

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
