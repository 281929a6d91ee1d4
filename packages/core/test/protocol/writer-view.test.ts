import fc from 'fast-check';
import { expect, test } from 'vitest';
import type { LockRecord, SlotHolder, VersionedRecord } from '../../src/contract/lock-record.js';
import { semaphoreRecord } from '../../src/engine/cas/slot-records.js';
import { writerView } from '../../src/engine/cas/writer-view.js';
import { writeIdOf } from '../../src/protocol/write-id.js';

// How a stored record reads to one writer of the state machine, for a lock and a semaphore, and
// beside records an older client wrote (ids with no writer prefix).

const holder = (lockId: string) => ({
  owner: 'host:1',
  lockId,
  acquiredAt: 1_000,
  renewedAt: 1_000,
  leaseMs: 30_000,
  expiresAt: 31_000,
});
const lockRecord = (lockId: string | null, writeId: string, token = 5): VersionedRecord => ({
  version: 'e1',
  record: { token, holder: lockId === null ? null : holder(lockId), writeId },
});

test("a lock record written by the writer's own claim is its own, and says which write", () => {
  const view = writerView(lockRecord('L1', writeIdOf('w7', 3)), 'w7', 'L1', false);
  expect(view).toEqual({ version: 'e1', token: 5, lastSeq: 3, own: { seq: 3, token: 5 }, claimable: false });
});

test('a record the writer freed is not its own entry, but its last write', () => {
  const view = writerView(lockRecord(null, writeIdOf('w7', 4)), 'w7', 'L1', true);
  expect(view.own).toBeUndefined();
  expect(view.lastSeq).toBe(4);
});

test('a hand-over naming the acquisition, written by another writer, is not the writer’s own', () => {
  const view = writerView(lockRecord('L2', writeIdOf('w7', 5)), 'w9', 'L2', false);
  expect(view.own).toBeUndefined();
  expect(view.lastSeq).toBeUndefined();
});

test("a semaphore slot is the writer's own by the slot's id, whoever wrote the record last", () => {
  const slot = (lockId: string, writeId: string, token: number): SlotHolder => ({
    ...holder(lockId),
    token,
    writeId,
  });
  const record = semaphoreRecord(
    undefined,
    2,
    [slot('L1', writeIdOf('w1', 2), 7), slot('L2', writeIdOf('w2', 1), 8)],
    8,
    writeIdOf('w2', 1),
  );
  const current = { version: 'e9', record };
  expect(writerView(current, 'w1', 'L1', false)).toMatchObject({
    own: { seq: 2, token: 7 },
    lastSeq: undefined,
  });
  expect(writerView(current, 'w2', 'L2', false)).toMatchObject({ own: { seq: 1, token: 8 }, lastSeq: 1 });
  expect(writerView(current, 'w3', 'L3', false).own).toBeUndefined();
});

test('no record: absent, claimable, nobody’s', () => {
  expect(writerView(null, 'w1', 'L1', false)).toEqual({
    version: null,
    token: 0,
    lastSeq: undefined,
    own: undefined,
    claimable: true,
  });
});

/**
 * Histories of writes on one lock record by three writers of this version (ids `<writer>:<seq>`)
 * and one older client (random ids): claims, releases and hand-overs between acquisitions. After
 * each write, the writer-prefix comparison says "mine" exactly when the id sets today's clients
 * keep (every id a writer sent) do, and never for the older client's writes.
 */
test('writer ids agree with the id sets they replace, and never match an older client', () => {
  const step = fc.record({
    by: fc.integer({ min: 0, max: 3 }),
    kind: fc.constantFrom('claim', 'release', 'handOver'),
    to: fc.integer({ min: 0, max: 2 }),
  });
  fc.assert(
    fc.property(fc.array(step, { minLength: 1, maxLength: 30 }), fc.uuid(), (steps, legacyId) => {
      const writers = ['w0', 'w1', 'w2'];
      const sent = writers.map(() => new Set<string>());
      const seqs = writers.map(() => 0);
      let record: LockRecord = { token: 0, holder: null, writeId: legacyId };
      for (const [n, { by, kind, to }] of steps.entries()) {
        const writeId = by === 3 ? `${legacyId.slice(0, 8)}-${n}` : writeIdOf(writers[by]!, ++seqs[by]!);
        if (by < 3) sent[by]!.add(writeId);
        const holderId = kind === 'release' ? null : kind === 'handOver' ? `L${to}` : `L${by}`;
        record = { token: record.token + 1, holder: holderId === null ? null : holder(holderId), writeId };
        const current = { version: `e${n}`, record };
        writers.forEach((writer, w) => {
          const view = writerView(current, writer, `L${w}`, false);
          const mine = sent[w]!.has(record.writeId);
          expect(view.lastSeq !== undefined).toBe(mine);
          expect(view.own !== undefined).toBe(mine && record.holder?.lockId === `L${w}`);
        });
      }
    }),
    { numRuns: 300 },
  );
});
