import { expect, test } from 'vitest';
import type { LeaseHolder, LockRecord, VersionedRecord } from '../../src/contract/lock-record.js';
import type { LockStore, WriteCondition } from '../../src/contract/lock-store.js';
import { holdersOf, isSemaphore } from '../../src/engine/cas/slot-records.js';
import { type RecordWrite, recordFor } from '../../src/engine/cas/writer-records.js';
import { LockClient, memoryStore } from '../../src/index.js';
import type { WriteIntent } from '../../src/protocol/writer-state.js';
import { ManualTime } from '../helpers/manual-time.js';

// recordFor builds the same records today's engine writes: today's client runs claims, renewals,
// releases with data, a written hand-over and semaphore slots against a store that keeps every
// write with the record it replaced; recordFor, given the same base, intent and holder fields,
// must build each one (write ids aside: today's are random, the writer's are `<writer>:<seq>`).

interface Written {
  base: LockRecord | null;
  record: LockRecord;
}

function recording(store: LockStore) {
  const writes: Written[] = [];
  const recorded = Object.assign(Object.create(store) as LockStore, {
    async write(key: string, record: LockRecord, condition: WriteCondition) {
      const base: VersionedRecord | null = 'absent' in condition ? null : await store.read(key);
      const outcome = await store.write(key, record, condition);
      if (outcome.ok) writes.push({ base: base?.record ?? null, record: structuredClone(record) });
      return outcome;
    },
  });
  return { store: recorded, writes };
}

/** The same record with its write ids (the record's and each slot's) replaced by their order of first appearance. */
function withoutWriteIds(record: LockRecord): unknown {
  const ids = new Map<string, string>();
  const name = (id: string) => {
    if (!ids.has(id)) ids.set(id, `id${ids.size}`);
    return ids.get(id)!;
  };
  return {
    ...record,
    writeId: 'id',
    holders: record.holders?.map((holder) => ({ ...holder, writeId: name(holder.writeId) })),
  };
}

/** What recordFor builds for `written`, with the intent and holder fields today's write shows. */
function rebuilt({ base, record }: Written, intent: WriteIntent, lockId: string, limit: number): LockRecord {
  const entry = holdersOf(record).find((holder) => holder.lockId === lockId);
  const {
    token: _token,
    writeId: _writeId,
    ...fields
  } = entry ?? ({} as LeaseHolder & { writeId: string; token: number });
  const live = limit > 1 && base ? holdersOf(base) : undefined;
  const write: RecordWrite = { writeId: record.writeId, lockId, limit, holder: fields as LeaseHolder, live };
  return recordFor(base, intent, write);
}

test('a lock: claim, heartbeat renewal, release with data, a claim after it', async () => {
  const time = new ManualTime();
  const { store, writes } = recording(memoryStore());
  const locks = new LockClient({ store, leaseMs: 30_000, pollMs: 50, clock: { time: time.scheduler() } });
  const lock = await locks.acquire('k');
  await time.advance(15_000); // one heartbeat renews it (every third of the lease)
  await lock.release({ data: { done: 1 } });
  const second = await locks.acquire('k');
  await second.release();
  await locks.close();

  const [claim, renewal, release, claimAgain, releaseAgain] = writes;
  expect(writes).toHaveLength(5);
  const id = claim!.record.holder!.lockId;
  expect(withoutWriteIds(rebuilt(claim!, { kind: 'claim', token: 1 }, id, 1))).toEqual(
    withoutWriteIds(claim!.record),
  );
  expect(withoutWriteIds(rebuilt(renewal!, { kind: 'renew', leaseMs: 30_000, token: 1 }, id, 1))).toEqual(
    withoutWriteIds(renewal!.record),
  );
  expect(withoutWriteIds(rebuilt(release!, { kind: 'release', data: '{"done":1}' }, id, 1))).toEqual(
    withoutWriteIds(release!.record),
  );
  const id2 = claimAgain!.record.holder!.lockId;
  expect(withoutWriteIds(rebuilt(claimAgain!, { kind: 'claim', token: 2 }, id2, 1))).toEqual(
    withoutWriteIds(claimAgain!.record),
  );
  expect(withoutWriteIds(rebuilt(releaseAgain!, { kind: 'release', data: undefined }, id2, 1))).toEqual(
    withoutWriteIds(releaseAgain!.record),
  );
});

test('a written hand-over to a local waiter, then a renewal of the waiter’s lease with tokens reserved', async () => {
  const time = new ManualTime();
  const { store, writes } = recording(memoryStore());
  const locks = new LockClient({ store, leaseMs: 30_000, pollMs: 50, clock: { time: time.scheduler() } });
  const first = await locks.acquire('k');
  const waiting = locks.acquire('k');
  await time.advance(1);
  await first.release({ data: 'handed' });
  const second = await waiting;
  await time.advance(15_000); // the waiter's heartbeat
  await second.release();
  await locks.close();

  // The hand-over: the first write that names another holder than the record it replaced.
  const at = writes.findIndex(
    (w) => w.base?.holder && w.record.holder && w.base.holder.lockId !== w.record.holder.lockId,
  );
  const handOver = writes[at]!;
  const renewal = writes[at + 1]!;
  const to = handOver.record.holder!.lockId;
  expect(renewal.record.holder?.lockId).toBe(to);
  expect(renewal.record.holder?.renewedAt).toBeGreaterThan(handOver.record.holder!.renewedAt);
  const token = handOver.record.holder?.token ?? handOver.record.token;
  const intent: WriteIntent = { kind: 'handOver', to: 'w2', token, leaseMs: 30_000, data: '"handed"' };
  expect(withoutWriteIds(rebuilt(handOver, intent, to, 1))).toEqual(withoutWriteIds(handOver.record));
  expect(withoutWriteIds(rebuilt(renewal, { kind: 'renew', leaseMs: 30_000, token }, to, 1))).toEqual(
    withoutWriteIds(renewal.record),
  );
});

test('a local pass with no write, then the renewal that stores the new caller’s token and fields', async () => {
  const time = new ManualTime();
  const { store, writes } = recording(memoryStore());
  const locks = new LockClient({ store, leaseMs: 30_000, pollMs: 50, clock: { time: time.scheduler() } });
  const first = await locks.acquire('k');
  const second = locks.acquire('k');
  const third = locks.acquire('k', { context: 'third caller' });
  await time.advance(1);
  await first.release({ data: 'handed' }); // written: it stores data
  const holder = await second;
  const before = writes.length;
  await time.advance(1);
  await holder.release(); // passed on: no write
  const passed = await third;
  expect(writes).toHaveLength(before);
  expect(passed.fencingToken).toBe(holder.fencingToken + 1);
  await time.advance(15_000); // the heartbeat
  const renewal = writes[before]!;
  await passed.release();
  await locks.close();

  const lockId = renewal.record.holder!.lockId;
  expect(renewal.record.holder).toMatchObject({ token: passed.fencingToken, context: 'third caller' });
  const intent: WriteIntent = { kind: 'renew', leaseMs: 30_000, token: passed.fencingToken };
  expect(withoutWriteIds(rebuilt(renewal, intent, lockId, 1))).toEqual(withoutWriteIds(renewal.record));
});

test('a semaphore: two slots claimed, one released', async () => {
  const time = new ManualTime();
  const { store, writes } = recording(memoryStore());
  const a = new LockClient({ store, leaseMs: 30_000, pollMs: 50, clock: { time: time.scheduler() } });
  const b = new LockClient({ store, leaseMs: 30_000, pollMs: 50, clock: { time: time.scheduler() } });
  const one = await a.acquire('s', { limit: 2 });
  await b.acquire('s', { limit: 2 });
  await one.release();
  await Promise.all([a.close(), b.close()]);

  const [claimOne, claimTwo, releaseOne] = writes;
  expect(isSemaphore(claimTwo!.record)).toBe(true);
  const slotToken = (written: Written, lockId: string) =>
    holdersOf(written.record).find((h) => h.lockId === lockId)!.token;
  const idOne = holdersOf(claimOne!.record)[0]!.lockId;
  const idTwo = holdersOf(claimTwo!.record).find((h) => h.lockId !== idOne)!.lockId;
  expect(
    withoutWriteIds(rebuilt(claimOne!, { kind: 'claim', token: slotToken(claimOne!, idOne) }, idOne, 2)),
  ).toEqual(withoutWriteIds(claimOne!.record));
  expect(
    withoutWriteIds(rebuilt(claimTwo!, { kind: 'claim', token: slotToken(claimTwo!, idTwo) }, idTwo, 2)),
  ).toEqual(withoutWriteIds(claimTwo!.record));
  expect(withoutWriteIds(rebuilt(releaseOne!, { kind: 'release', data: undefined }, idOne, 2))).toEqual(
    withoutWriteIds(releaseOne!.record),
  );
});
