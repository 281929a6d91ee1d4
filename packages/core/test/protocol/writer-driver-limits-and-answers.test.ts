import { expect, test } from 'vitest';
import type { LockRecord, SlotHolder, VersionedRecord } from '../../src/contract/lock-record.js';
import type { LockStore, WriteCondition } from '../../src/contract/lock-store.js';
import { semaphoreRecord } from '../../src/engine/cas/slot-records.js';
import { WriterDriver } from '../../src/engine/cas/writer-driver.js';
import { memoryStore } from '../../src/index.js';
import { LockCorruptedError, LockLostError } from '../../src/shared/errors.js';
import { systemScheduler } from '../../src/shared/scheduler.js';
import { ManualTime } from '../helpers/manual-time.js';

// Where the WriterDriver disagrees with the real stores or with what its callers need.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** What `promise` settles to: its value or its error (a promise that never settles fails the test by its timeout). */
const settled = <T>(promise: Promise<T>): Promise<T | unknown> => promise.catch((error: unknown) => error);
/** A store that counts its reads, so a test can wait for a writer to have looked several times. */
function counted(store: LockStore) {
  const counter = { reads: 0 };
  const wrapped = Object.assign(Object.create(store) as LockStore, {
    async read(key: string) {
      counter.reads++;
      return store.read(key);
    },
  });
  return { store: wrapped, counter };
}
async function untilLooked(counter: { reads: number }, times: number) {
  while (counter.reads < times) await sleep(2);
}

const expired = (current: VersionedRecord) => {
  const holder = current.record.holder;
  return holder?.expiresAt != null && holder.expiresAt < Date.now();
};

function driver(store: LockStore, n: number, limit = 1, liveSlots?: (c: VersionedRecord) => SlotHolder[]) {
  return new WriterDriver({
    store,
    key: 'k',
    lockId: `L${n}`,
    writer: `w${n}`,
    owner: `test:${n}`,
    terms: { leaseMs: 10_000, claimBy: 'version', marginMs: 1_000, retryMs: 5 },
    limit,
    time: systemScheduler,
    claimable: expired,
    ...(liveSlots ? { liveSlots } : {}),
  });
}

const holder = (lockId: string, expiresAt: number) => ({
  owner: 'other',
  lockId,
  acquiredAt: expiresAt - 30_000,
  renewedAt: expiresAt - 30_000,
  leaseMs: 30_000,
  expiresAt,
});

test('a release whose conflict answer came from our own SDK-retried request (maybeApplied) is not reported as certainly not applied', async () => {
  const inner = memoryStore();
  // DynamoDB: the SDK retried the release; its first attempt applied, another client claimed
  // the freed key at once, and the retry's failed condition returns that client's record.
  const store = Object.assign(Object.create(inner) as LockStore, {
    async write(key: string, record: LockRecord, condition: WriteCondition) {
      const outcome = await inner.write(key, record, condition);
      if (!outcome.ok || record.holder !== null) return outcome;
      const other: LockRecord = {
        ...record,
        token: record.token + 1,
        holder: holder('L9', Date.now() + 60_000),
        writeId: 'x',
      };
      await inner.write(key, other, { version: outcome.version });
      return { ok: false as const, current: await inner.read(key), maybeApplied: true };
    },
  });
  const writer = driver(store, 1);
  await writer.acquire();
  const error = await settled(writer.release({ stored: true }));
  expect((await inner.read('k'))?.record.data).toEqual({ stored: true }); // it was applied
  // Its read finds the key taken: the release may have landed before that, and the writer ends.
  expect(error).toBeInstanceOf(LockLostError);
  expect((error as LockLostError).maybeApplied).toBe(true);
  expect(await writer.ended).toBe('lost');
});

test('a semaphore writer does not join a key held by a plain lock with a live lease', async () => {
  const store = memoryStore();
  await store.write(
    'k',
    { token: 4, holder: holder('L0', Date.now() + 60_000), writeId: 'old' },
    { absent: true },
  );
  const looked = counted(store);
  const writer = driver(looked.store, 1, 2);
  const got = settled(writer.acquire());
  await untilLooked(looked.counter, 3);
  writer.giveUp();
  expect(await got).not.toBeTypeOf('number');
  expect((await store.read('k'))?.record.holder?.lockId).toBe('L0');
});

/** A store whose key "k" is a semaphore of limit 2 with two live holders, A and B. */
async function fullSemaphore() {
  const store = memoryStore();
  const slot = (id: string, token: number): SlotHolder => ({
    ...holder(id, Date.now() + 60_000),
    token,
    writeId: `old-${id}`,
  });
  const full = semaphoreRecord(undefined, 2, [slot('A', 1), slot('B', 2)], 2, 'old-B');
  await store.write('k', full, { absent: true });
  return store;
}

test('a semaphore writer of limit 3 does not take a third slot beside two live holders of limit 2', async () => {
  const store = await fullSemaphore();
  const looked = counted(store);
  const writer = driver(looked.store, 1, 3);
  const got = settled(writer.acquire());
  await untilLooked(looked.counter, 3);
  writer.giveUp();
  expect(await got).not.toBeTypeOf('number');
  expect((await store.read('k'))?.record.holders).toHaveLength(2);
});

test('a semaphore claim is not sent when a holder judged gone at the decision looks live again at the write', async () => {
  const store = await fullSemaphore();
  // The judge drops B the first time it is asked (the decision), then sees it live again (a wall
  // clock stepped back before the write): a claim on that reading would store three holders.
  let judged = 0;
  const live = (current: VersionedRecord) => {
    const all = current.record.holders ?? [];
    return judged++ === 0 ? all.filter((entry) => entry.lockId !== 'B') : all;
  };
  const looked = counted(store);
  const writer = driver(looked.store, 1, 2, live);
  const got = settled(writer.acquire());
  await Promise.race([untilLooked(looked.counter, 2), got]); // a claim that went out ends the wait
  const stored = (await store.read('k'))?.record.holders?.map((entry) => entry.lockId);
  writer.giveUp();
  expect(stored).toEqual(['A', 'B']);
  expect(await got).not.toBeTypeOf('number');
});

test('release() after the writer ended (given up) settles', async () => {
  const writer = driver(memoryStore(), 1);
  await writer.acquire();
  writer.giveUp();
  expect(await writer.ended).toBe('released');
  expect(await settled(writer.release())).toBeInstanceOf(LockLostError);
});

test('release() before the lease is held settles', async () => {
  const store = memoryStore();
  await store.write(
    'k',
    { token: 4, holder: holder('L0', Date.now() + 60_000), writeId: 'old' },
    { absent: true },
  );
  const writer = driver(store, 1);
  void writer.acquire().catch(() => undefined);
  const released = settled(writer.release());
  writer.giveUp();
  expect(await released).toBeInstanceOf(LockLostError);
});

test('release() called twice: both calls settle', async () => {
  const writer = driver(memoryStore(), 1);
  await writer.acquire();
  const first = writer.release({ n: 1 });
  const second = writer.release({ n: 2 });
  // The second waits for the first's answer: released, so the second's data is not stored.
  expect(await first).toBeUndefined();
  await expect(second).rejects.toThrow(/not held/);
});

test('a corrupted record: acquire() fails with the LockCorruptedError instead of polling forever', async () => {
  const inner = memoryStore();
  let reads = 0;
  const store = Object.assign(Object.create(inner) as LockStore, {
    async read(key: string): Promise<VersionedRecord | null> {
      reads++;
      throw new LockCorruptedError(key, 'not JSON', { version: '1' });
    },
    async write() {
      return { ok: false as const };
    },
  });
  const writer = driver(store, 1);
  const got = await settled(writer.acquire());
  expect(reads).toBeGreaterThan(0);
  expect(got).toBeInstanceOf(LockCorruptedError);
});

test('a semaphore without liveSlots reclaims slots whose leases expired long ago', async () => {
  const store = memoryStore();
  const dead = (id: string, token: number): SlotHolder => ({
    ...holder(id, Date.now() - 60_000),
    token,
    writeId: `old-${id}`,
  });
  await store.write('k', semaphoreRecord(undefined, 2, [dead('A', 1), dead('B', 2)], 2, 'old-B'), {
    absent: true,
  });
  const writer = driver(store, 1, 2);
  expect(await writer.acquire()).toBe(3);
  writer.giveUp();
});

test('a lease renewed many times keeps only the records its next write may need', async () => {
  // Simulated time: renewals come when the test moves the clock, however slow the machine is.
  const time = new ManualTime();
  const writer = new WriterDriver({
    store: memoryStore(),
    key: 'k',
    lockId: 'L1',
    writer: 'w1',
    owner: 'test',
    terms: { leaseMs: 60_000, claimBy: 'version', marginMs: 6_000, retryMs: 100 },
    limit: 1,
    time: time.scheduler(),
    claimable: expired,
  });
  await writer.acquire();
  await time.advance(12 * 30_000); // a renewal about every 27 s
  expect(writer.state.seq).toBeGreaterThan(10);
  expect(writer.state.end).toBeNull();
  expect(writer.recordsKept).toBeLessThanOrEqual(2);
  await writer.release();
});
