// Compare-and-swap on one record per key: create if absent, replace and delete at a version,
// and nothing else, even under concurrent writers or after the key was deleted and recreated.
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { type ContractRun, expectCurrent as expectCurrentOf, expectOk, freshKey } from './contract-run.js';
import { freeRecord, heldRecord } from './records.js';
import type { LockRecordShape, WriteOutcomeShape } from './store-shapes.js';

export function writeCases(run: ContractRun): void {
  const { LockStoreError } = run.latch;
  const expectCurrent = (
    outcome: WriteOutcomeShape,
    expected: { version: string; record: LockRecordShape } | null,
  ) => expectCurrentOf(run.subject(), outcome, expected);

  it('reads an absent key as null', async () => {
    const store = run.store();
    await expect(store.read(freshKey('absent'))).resolves.toBeNull();
  });

  it('creates a record only when absent', async () => {
    const store = run.store();
    const key = freshKey('create');
    const first = heldRecord(1);
    const version = expectOk(await store.write(key, first, { absent: true }));
    expect(await store.read(key)).toEqual({ version, record: first });

    const second = await store.write(key, heldRecord(1, { owner: 'someone-else' }), { absent: true });
    expectCurrent(second, { version, record: first });
    expect(await store.read(key)).toEqual({ version, record: first });
  });

  it('replaces a record at the version it read, and refuses a stale version', async () => {
    const store = run.store();
    const key = freshKey('replace');
    const v1 = expectOk(await store.write(key, heldRecord(1), { absent: true }));
    const next = heldRecord(1, { renewedAt: 1_700_000_011_000, expiresAt: 1_700_000_041_000 });
    const v2 = expectOk(await store.write(key, next, { version: v1 }));
    expect(v2).not.toBe(v1);
    expect(await store.read(key)).toEqual({ version: v2, record: next });

    const stale = await store.write(key, freeRecord(1), { version: v1 });
    expectCurrent(stale, { version: v2, record: next });
    expect(await store.read(key)).toEqual({ version: v2, record: next });
  });

  it('refuses a version write to an absent key', async () => {
    const store = run.store();
    const key = freshKey('replace-absent');
    const other = freshKey('other');
    const version = expectOk(await store.write(other, freeRecord(1), { absent: true }));
    expectCurrent(await store.write(key, freeRecord(1), { version }), null);
    await expect(store.read(key)).resolves.toBeNull();
  });

  it('deletes only at the current version', async () => {
    const store = run.store();
    const key = freshKey('delete');
    const v1 = expectOk(
      await store.write(key, heldRecord(1, { leaseMs: null, expiresAt: null }), { absent: true }),
    );
    const record = freeRecord(1);
    const v2 = expectOk(await store.write(key, record, { version: v1 }));

    expectCurrent(await store.delete(key, v1), { version: v2, record });
    expect((await store.read(key))?.version).toBe(v2);

    expect(await store.delete(key, v2)).toMatchObject({ ok: true });
    await expect(store.read(key)).resolves.toBeNull();
    expectCurrent(await store.delete(key, v2), null);
  });

  it('never lets a version from before a delete match the record created after it', async () => {
    const store = run.store();
    const key = freshKey('aba');
    const record = freeRecord(3);
    const old = expectOk(await store.write(key, record, { absent: true }));
    expectOk(await store.delete(key, old));
    // Same content but for the writeId, as the lease protocol would write it.
    const again = { ...record, writeId: randomUUID() };
    const current = expectOk(await store.write(key, again, { absent: true }));
    expect(current).not.toBe(old);
    expect((await store.write(key, freeRecord(4), { version: old })).ok).toBe(false);
    expect((await store.delete(key, old)).ok).toBe(false);
    expect(await store.read(key)).toEqual({ version: current, record: again });
  });

  it('lets exactly one of 50 concurrent creates win', async () => {
    const store = run.store();
    const key = freshKey('race');
    const records = Array.from({ length: 50 }, (_, i) => heldRecord(1, { owner: `contender-${i}` }));
    const settled = await Promise.allSettled(records.map((r) => store.write(key, r, { absent: true })));
    const winners: number[] = [];
    settled.forEach((result, i) => {
      if (result.status === 'fulfilled') {
        if (result.value.ok) winners.push(i);
        else expect(result.value.maybeApplied ?? false).toBe(false);
      } else {
        // S3 may answer 409 ConditionalRequestConflict to a losing concurrent request.
        expect(result.reason).toBeInstanceOf(LockStoreError);
        expect(result.reason).toMatchObject({ retryable: true, maybeApplied: false });
      }
    });
    expect(winners).toHaveLength(1);
    expect((await store.read(key))?.record).toEqual(records[winners[0]!]);
  });
}
