import { expect, test } from 'vitest';
import type { LockRecord } from '../../src/contract/lock-record.js';
import type { LockStore, WriteCondition } from '../../src/contract/lock-store.js';
import { LockStoreError } from '../../src/shared/errors.js';
import { ManualTime } from '../helpers/manual-time.js';
import { watchedStore, writerOn } from '../helpers/manual-writer.js';

// Races an attack on the writer machine found: a second release racing the first, a hand-over
// racing the waiter's own look, a paced writer left without a timer, and a store that refuses
// the copies of a write of unknown outcome.

const refusal = () =>
  new LockStoreError('throttled', { retryable: true, maybeApplied: false, reason: 'throttled' });

test('a second release with other data waits for the first: the first is told released, the second that nothing was held', async () => {
  const time = new ManualTime();
  const { store, state, releaseWrites } = watchedStore();
  const writer = writerOn(store, time, 1);
  const other = writerOn(store, time, 2);
  void writer.acquire();
  await time.advance(1);
  state.holdWrites = true;
  const first = writer.release({ v: 'A' }).then(
    () => 'released',
    (error: unknown) => error,
  );
  const second = writer.release({ v: 'B' }).then(
    () => 'released',
    (error: unknown) => error,
  );
  await time.advance(1);
  releaseWrites();
  await time.advance(1);
  expect(await first).toBe('released');
  expect(String(await second)).toMatch(/not held/);
  expect((await store.read('k'))!.record.data).toEqual({ v: 'A' });
  void other.acquire();
  await time.advance(1);
  expect(other.state.lease).not.toBeNull();
  expect(writer.state.end).toBe('released'); // not holding beside the next holder
  await other.release();
});

test("a waiter handed the lease while its own look is on its way keeps it: the look's stale answer is dropped", async () => {
  const time = new ManualTime();
  const { store } = watchedStore();
  let holdReads = false;
  let heldReads: (() => void)[] = [];
  const slowStore = Object.assign(Object.create(store) as LockStore, {
    async read(key: string) {
      const current = await store.read(key);
      if (holdReads) await new Promise<void>((resolve) => heldReads.push(resolve));
      return current;
    },
  });
  const terms = { leaseMs: null };
  const holder = writerOn(slowStore, time, 1, { terms });
  const waiter = writerOn(slowStore, time, 2, { terms, pacedByCaller: true });
  void holder.acquire();
  await time.advance(1);
  void waiter.attempt().catch(() => undefined);
  await time.advance(1);
  holdReads = true;
  void waiter.attempt().catch(() => undefined); // its look is read, and its answer held back
  await time.advance(1);
  await holder.handOver(waiter);
  holdReads = false;
  for (const resolve of heldReads) resolve();
  heldReads = [];
  await time.advance(1);
  expect(waiter.state.end).toBeNull();
  expect(waiter.signal.aborted).toBe(false);
  expect((await store.read('k'))!.record.holder?.lockId).toBe('L2');
  await waiter.release();
  expect((await store.read('k'))!.record.holder).toBeNull();
});

test('a paced writer whose claim was refused ends once its caller gives up', async () => {
  const time = new ManualTime();
  const { store, state } = watchedStore();
  const writer = writerOn(store, time, 1, { pacedByCaller: true });
  state.refuseWrites = true;
  await writer.attempt().catch(() => undefined);
  state.refuseWrites = false;
  writer.giveUp();
  await time.advance(1_000);
  expect(writer.state.end).toBe('gaveUp');
});

test('a paced writer handed the lease while its refused claim waited renews it and keeps its deadline', async () => {
  const time = new ManualTime();
  const { store, state } = watchedStore();
  const holder = writerOn(store, time, 1);
  const waiter = writerOn(store, time, 2, { pacedByCaller: true });
  void holder.acquire();
  await time.advance(1);
  await waiter.attempt().catch(() => undefined); // the key held: seen
  await holder.release();
  state.refuseWrites = true;
  await waiter.attempt().catch(() => undefined); // its claim refused
  state.refuseWrites = false;
  const next = writerOn(store, time, 3);
  void next.acquire();
  await time.advance(1);
  await next.handOver(waiter);
  const writes = state.sent.filter((record) => record.writeId.startsWith('w2:')).length;
  await time.advance(30_000);
  // Renewed on its heartbeat (a 10 s lease: every 4.5 s or so), so still trusted.
  expect(
    state.sent.filter((record) => record.writeId.startsWith('w2:')).length - writes,
  ).toBeGreaterThanOrEqual(5);
  expect(waiter.signal.aborted).toBe(false);
  await waiter.release();
});

test('copies of a release of unknown outcome that the store refuses are read about at the retry pace, not in a loop', async () => {
  const time = new ManualTime();
  const { store } = watchedStore();
  let requests = 0;
  let mode: 'ok' | 'lose' | 'refuse' = 'ok';
  const faulty = Object.assign(Object.create(store) as LockStore, {
    async read(key: string) {
      requests++;
      return store.read(key);
    },
    async write(key: string, record: LockRecord, condition: WriteCondition) {
      requests++;
      if (mode === 'refuse') throw refusal();
      if (mode === 'lose') {
        mode = 'refuse'; // not applied, its answer lost; the store refuses from now on
        throw new LockStoreError('timeout', { retryable: true, maybeApplied: true, reason: 'unavailable' });
      }
      return store.write(key, record, condition);
    },
  });
  const writer = writerOn(faulty, time, 1); // retryMs 50
  void writer.acquire();
  await time.advance(1);
  mode = 'lose';
  await writer.release().catch(() => undefined);
  const before = requests;
  await new Promise((resolve) => setTimeout(resolve, 100)); // wall time passes; the writer's clock does not
  expect(requests - before).toBeLessThanOrEqual(3);
  await time.advance(1_000); // then at most a read and a copy every 50 ms
  expect(requests - before).toBeLessThanOrEqual(45);
});
