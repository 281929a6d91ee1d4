import { describe, expect, test } from 'vitest';
import {
  holderToken,
  type LeaseHolder,
  type LockRecord,
  type SlotHolder,
} from '../../src/contract/lock-record.js';
import { decodeRecord, encodeRecord } from '../../src/contract/record-codec.js';
import { RESERVED_TOKENS } from '../../src/engine/cas/local-pass.js';
import {
  isSemaphore,
  SEMAPHORE_HOLDER_ID,
  semaphoreRecord,
  slotOf,
} from '../../src/engine/cas/slot-records.js';
import { recordFor } from '../../src/engine/cas/writer-records.js';
import { writerView } from '../../src/engine/cas/writer-view.js';
import { writeIdOf } from '../../src/protocol/write-id.js';

// The records the state machine's writes store, for a lock and a semaphore alike, read back the
// way today's code and the machine's view read them.

const holder = (lockId: string, at = 1_000): LeaseHolder => ({
  owner: 'host:1',
  lockId,
  acquiredAt: at,
  renewedAt: at,
  leaseMs: 30_000,
  expiresAt: at + 30_000,
});
const slot = (lockId: string, token: number, writeId: string): SlotHolder => ({
  ...holder(lockId),
  token,
  writeId,
});
/** What a store hands back: the record through its JSON form. */
const stored = (record: LockRecord) => decodeRecord('k', encodeRecord(record));
const view = (record: LockRecord, writer: string, lockId: string) =>
  writerView({ version: 'v', record }, writer, lockId, false);

describe('a lock', () => {
  test('a claim of a new key: what a claim by version writes today, and the writer’s own', () => {
    const record = stored(
      recordFor(
        null,
        { kind: 'claim', token: 1 },
        { writeId: writeIdOf('w1', 1), lockId: 'L1', limit: 1, holder: holder('L1') },
      ),
    );
    expect(record).toEqual({ token: 1, holder: holder('L1'), writeId: 'w1:1' });
    expect(view(record, 'w1', 'L1')).toMatchObject({ own: { seq: 1, token: 1 }, lastSeq: 1 });
  });

  test('a claim of a freed record keeps its data and the fields a newer version wrote, and takes the next token', () => {
    const base: LockRecord = {
      token: 7,
      holder: null,
      writeId: 'old',
      data: { n: 1 },
      extensions: { future: true },
    };
    const record = recordFor(
      base,
      { kind: 'claim', token: 8 },
      { writeId: 'w2:1', lockId: 'L2', limit: 1, holder: holder('L2') },
    );
    expect(record).toMatchObject({ token: 8, data: { n: 1 }, extensions: { future: true } });
    expect(holderToken(record)).toBe(8);
  });

  test('a claim of an expired lease replaces its holder, whatever holders the caller counts', () => {
    const base: LockRecord = { token: 6, holder: holder('L0'), writeId: 'old' };
    const record = recordFor(
      base,
      { kind: 'claim', token: 7 },
      { writeId: 'w1:1', lockId: 'L1', limit: 1, holder: holder('L1'), live: [slot('L0', 6, 'old')] },
    );
    expect(record.holder?.lockId).toBe('L1');
    expect(record.holders).toBeUndefined();
  });

  test('a one-request claim leaves its token to the store: the record’s + 1 is sent', () => {
    const base: LockRecord = { token: 4, holder: null, writeId: 'old' };
    const record = recordFor(
      base,
      { kind: 'claim', token: undefined },
      { writeId: 'w1:1', lockId: 'L1', limit: 1, holder: holder('L1') },
    );
    expect(record.token).toBe(5);
  });

  test('a hand-over names the waiter with the next token and reserves tokens above it; it is not the waiter’s own write', () => {
    const base = recordFor(
      null,
      { kind: 'claim', token: 3 },
      { writeId: 'w1:1', lockId: 'L1', limit: 1, holder: holder('L1') },
    );
    const record = stored(
      recordFor(
        base,
        { kind: 'handOver', to: 'w2', token: 4, leaseMs: 30_000, data: '"done"' },
        { writeId: 'w1:2', lockId: 'L1', limit: 1, holder: holder('L2', 2_000) },
      ),
    );
    expect(record.holder?.lockId).toBe('L2');
    expect(holderToken(record)).toBe(4);
    expect(record.token).toBe(4 + RESERVED_TOKENS - 1);
    expect(record.data).toBe('done');
    expect(view(record, 'w2', 'L2').own).toBeUndefined();
    expect(view(record, 'w1', 'L1')).toMatchObject({ own: undefined, lastSeq: 2 });
  });

  test('a renewal keeps the holder, its own token below the record’s, and tops the reserve up', () => {
    const base: LockRecord = { token: 12, holder: { ...holder('L2'), token: 11 }, writeId: 'w2:3' };
    const renewed = { ...holder('L2', 5_000), acquiredAt: 1 };
    const record = recordFor(
      base,
      { kind: 'renew', leaseMs: 30_000, token: 11 },
      { writeId: 'w2:4', lockId: 'L2', limit: 1, holder: renewed },
    );
    expect(record.holder).toEqual({ ...holder('L2'), renewedAt: 5_000, expiresAt: 35_000, token: 11 });
    expect(record.token).toBe(11 + RESERVED_TOKENS);
    expect(view(record, 'w2', 'L2').own).toEqual({ seq: 4, token: 11 });
  });

  test('a release frees the record, keeping its token, and stores data only when given', () => {
    const base: LockRecord = { token: 5, holder: holder('L1'), writeId: 'w1:1', data: 'before' };
    const kept = recordFor(
      base,
      { kind: 'release', data: undefined },
      { writeId: 'w1:2', lockId: 'L1', limit: 1 },
    );
    expect(kept).toEqual({ token: 5, holder: null, writeId: 'w1:2', data: 'before' });
    const replaced = recordFor(
      base,
      { kind: 'release', data: '{"a":[1]}' },
      { writeId: 'w1:2', lockId: 'L1', limit: 1 },
    );
    expect(replaced.data).toEqual({ a: [1] });
    expect(view(replaced, 'w1', 'L1')).toMatchObject({ own: undefined, lastSeq: 2 });
  });
});

describe('a semaphore', () => {
  const other = slot('L9', 3, 'old-client-id');

  test('a claim adds a slot beside the live holders, with the next token', () => {
    const base = semaphoreRecord(undefined, 2, [other], 3, 'x');
    const record = stored(
      recordFor(
        base,
        { kind: 'claim', token: 4 },
        { writeId: 'w1:1', lockId: 'L1', limit: 2, holder: holder('L1'), live: [other] },
      ),
    );
    expect(isSemaphore(record)).toBe(true);
    expect(record.limit).toBe(2);
    expect(record.holder?.lockId).toBe(SEMAPHORE_HOLDER_ID);
    expect(record.token).toBe(4);
    expect(slotOf(record, 'L1')).toMatchObject({ token: 4, writeId: 'w1:1' });
    expect(slotOf(record, 'L9')).toEqual(other);
    expect(view(record, 'w1', 'L1').own).toEqual({ seq: 1, token: 4 });
    expect(view(record, 'w9', 'L9').own).toBeUndefined(); // an older client's slot: no writer prefix
  });

  test('a claim drops holders this client judged gone', () => {
    const base = semaphoreRecord(undefined, 2, [other], 3, 'x');
    const record = recordFor(
      base,
      { kind: 'claim', token: 4 },
      { writeId: 'w1:1', lockId: 'L1', limit: 2, holder: holder('L1'), live: [] },
    );
    expect(record.holders?.map((entry) => entry.lockId)).toEqual(['L1']);
  });

  test('a renewal rewrites only its own slot; a release removes it, and the last one frees the record', () => {
    const mine = slot('L1', 4, 'w1:1');
    const base = semaphoreRecord(undefined, 2, [other, mine], 4, 'w1:1');
    const renewed = recordFor(
      base,
      { kind: 'renew', leaseMs: 30_000, token: 4 },
      { writeId: 'w1:2', lockId: 'L1', limit: 2, holder: holder('L1', 9_000) },
    );
    expect(slotOf(renewed, 'L9')).toEqual(other);
    expect(slotOf(renewed, 'L1')).toMatchObject({
      token: 4,
      writeId: 'w1:2',
      renewedAt: 9_000,
      acquiredAt: 1_000,
    });
    expect(renewed.token).toBe(4);
    const released = recordFor(
      renewed,
      { kind: 'release', data: undefined },
      { writeId: 'w1:3', lockId: 'L1', limit: 2 },
    );
    expect(released.holders).toEqual([other]);
    const empty = recordFor(
      semaphoreRecord(undefined, 2, [slot('L1', 4, 'w1:5')], 4, 'w1:5'),
      { kind: 'release', data: undefined },
      { writeId: 'w1:4', lockId: 'L1', limit: 2 },
    );
    expect(empty).toMatchObject({ holder: null, holders: [], limit: 2, token: 4 });
    expect(isSemaphore(empty)).toBe(true);
  });

  test('a slot is not handed over', () => {
    const base: LockRecord = {
      token: 4,
      holder: null,
      writeId: 'w1:1',
      limit: 2,
      holders: [slot('L1', 4, 'w1:1')],
    };
    expect(() =>
      recordFor(
        base,
        { kind: 'handOver', to: 'w2', token: 5, leaseMs: 30_000, data: undefined },
        { writeId: 'w1:2', lockId: 'L1', limit: 2, holder: holder('L2') },
      ),
    ).toThrow(/not handed over/);
  });
});
