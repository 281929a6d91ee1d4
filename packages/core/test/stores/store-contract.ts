import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LeaseHolder, LockRecord, VersionedRecord } from '../../src/contract/lock-record.js';
import type { ClaimOutcome, LockStore, WriteOutcome } from '../../src/contract/lock-store.js';
import { LockConfigError, LockCorruptedError, LockStoreError } from '../../src/shared/errors.js';

export interface StoreUnderTest {
  store: LockStore;
  cleanup?(): Promise<void>;
  /** Stores `rawText` under `key` as the backend would hold a record, bypassing the codec. */
  tamper?(key: string, rawText: string): Promise<void>;
  /** The longest key checkKey accepts (and the backend stores), and what the limit counts. */
  maxKey?: { length: number; unit: 'utf8-bytes' | 'utf16-units' };
  /** True when failed conditions report the stored record (`current`) without another read. */
  conflictsReturnCurrent?: boolean;
}

let unique = 0;
/** Keys never repeat across tests or runs, so suites can share one bucket or table. */
const freshKey = (label: string) => `contract/${label}/${Date.now().toString(36)}-${unique++}`;

export function freeRecord(token: number, data?: unknown): LockRecord {
  const record: LockRecord = { token, holder: null, writeId: randomUUID() };
  if (data !== undefined) record.data = data;
  return record;
}

export function heldRecord(token: number, holder: Partial<LeaseHolder> = {}, data?: unknown): LockRecord {
  return {
    ...freeRecord(token, data),
    holder: {
      owner: 'host-a:1234:abcd',
      lockId: randomUUID(),
      acquiredAt: 1_700_000_000_000,
      renewedAt: 1_700_000_001_000,
      leaseMs: 30_000,
      expiresAt: 1_700_000_031_000,
      context: 'nightly report',
      ...holder,
    },
  };
}

/** A claim that did not apply, certainly not by us, having found `current`. */
function expectClaimConflict(outcome: ClaimOutcome, current: VersionedRecord | null): void {
  expect(outcome.ok).toBe(false);
  if (outcome.ok) return;
  expect(outcome.current).toEqual(current);
  expect(outcome.maybeApplied ?? false).toBe(false);
}

function expectOk(outcome: WriteOutcome): string {
  if (!outcome.ok) throw new Error(`expected the write to apply, got ${JSON.stringify(outcome)}`);
  return outcome.version;
}

/** The LockStore contract every backend must meet, run against a real instance of it. */
export function describeStoreContract(
  name: string,
  makeStore: () => Promise<StoreUnderTest>,
  options: { claim: boolean },
): void {
  describe(`${name}: LockStore contract`, () => {
    let subject: StoreUnderTest;
    let store: LockStore;

    beforeAll(async () => {
      subject = await makeStore();
      store = subject.store;
    });
    afterAll(async () => {
      await subject?.cleanup?.();
    });

    /** When the store reports the record it found, it must be the stored one. */
    const expectCurrent = (
      outcome: WriteOutcome,
      expected: { version: string; record: LockRecord } | null,
    ) => {
      expect(outcome.ok).toBe(false);
      if (outcome.ok) return;
      expect(outcome.maybeApplied ?? false).toBe(false);
      if (subject.conflictsReturnCurrent) expect(outcome.current).toEqual(expected);
      else if (outcome.current !== undefined) expect(outcome.current).toEqual(expected);
    };

    it('reads an absent key as null', async () => {
      await expect(store.read(freshKey('absent'))).resolves.toBeNull();
    });

    it('creates a record only when absent', async () => {
      const key = freshKey('create');
      const first = heldRecord(1);
      const version = expectOk(await store.write(key, first, { absent: true }));
      expect(await store.read(key)).toEqual({ version, record: first });

      const second = await store.write(key, heldRecord(1, { owner: 'someone-else' }), { absent: true });
      expectCurrent(second, { version, record: first });
      expect(await store.read(key)).toEqual({ version, record: first });
    });

    it('replaces a record at the version it read, and refuses a stale version', async () => {
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
      const key = freshKey('replace-absent');
      const other = freshKey('other');
      const version = expectOk(await store.write(other, freeRecord(1), { absent: true }));
      expectCurrent(await store.write(key, freeRecord(1), { version }), null);
      await expect(store.read(key)).resolves.toBeNull();
    });

    it('deletes only at the current version', async () => {
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

    it('round-trips data: unicode, nested JSON, falsy values, and no data at all', async () => {
      const samples: unknown[] = [
        { city: 'Zürich', note: 'naïve café — 漢字 — 🚀🔒', rtl: 'שלום', zeroWidth: 'a\u200Db' },
        { nested: { list: [1, -2.5, 1e21, { deep: [null, true, false, ''] }], empty: {}, none: [] } },
        'just a string with "quotes" and \\ backslashes\n',
        0,
        false,
        null,
        [],
      ];
      for (const data of samples) {
        const key = freshKey('data');
        const record = heldRecord(7, {}, data);
        const version = expectOk(await store.write(key, record, { absent: true }));
        const read = await store.read(key);
        expect(read).toEqual({ version, record });
        expect(read?.record.data).toStrictEqual(data);
      }
      const key = freshKey('no-data');
      expectOk(await store.write(key, freeRecord(2), { absent: true }));
      const read = await store.read(key);
      expect(read?.record).not.toHaveProperty('data');
    });

    it('keeps every holder field, including a fail-closed lease and a missing context', async () => {
      const key = freshKey('holder');
      const record = heldRecord(9, { leaseMs: null, expiresAt: null, context: undefined });
      const version = expectOk(await store.write(key, record, { absent: true }));
      const read = await store.read(key);
      expect(read).toEqual({ version, record });
      expect(read?.record.holder?.leaseMs).toBeNull();
      expect(read?.record.holder?.expiresAt).toBeNull();
      expect(read?.record.holder?.context).toBeUndefined();
    });

    it('keeps keys verbatim: characters URLs and paths treat specially stay distinct', async () => {
      const base = freshKey('chars');
      const suffixes = [
        'a b',
        'a+b',
        'a%20b',
        'q?x=1&y=2',
        'h#frag',
        'ü/🔒/漢字',
        'a//b',
        './dot',
        '../up',
        'tab\tline',
      ];
      const versions = new Map<string, string>();
      for (const suffix of suffixes) {
        versions.set(
          suffix,
          expectOk(await store.write(`${base}/${suffix}`, freeRecord(1, suffix), { absent: true })),
        );
      }
      for (const suffix of suffixes) {
        expect(await store.read(`${base}/${suffix}`)).toMatchObject({
          version: versions.get(suffix),
          record: { data: suffix },
        });
      }
    });

    it('lets exactly one of 50 concurrent creates win', async () => {
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

    it('sizes records so that bigger data counts more', () => {
      const small = store.recordBytes(heldRecord(1, {}, 'x'));
      const big = store.recordBytes(heldRecord(1, {}, 'x'.repeat(1000)));
      const unicode = store.recordBytes(heldRecord(1, {}, '€'.repeat(1000)));
      expect(big - small).toBeGreaterThanOrEqual(999);
      expect(unicode).toBeGreaterThan(big);
      expect(store.maxRecordBytes).toBeGreaterThan(big);
    });

    it('checks key length before sending anything', async () => {
      const limit = subject.maxKey;
      expect(limit, 'the store under test must state its key limit').toBeDefined();
      if (!limit) return;
      const longest = 'k'.repeat(limit.length);
      store.checkKey(longest);
      expect(() => store.checkKey(`${longest}k`)).toThrow(LockConfigError);
      // The limit is real: a key of exactly that length is stored and read back.
      const version = expectOk(await store.write(longest, freeRecord(1), { absent: true }));
      expect((await store.read(longest))?.version).toBe(version);
      expectOk(await store.delete(longest, version));
      if (limit.unit === 'utf8-bytes') {
        // Three UTF-8 bytes per character: over the limit in bytes, far under it in characters.
        const euros = '€'.repeat(Math.floor(limit.length / 3) + 1);
        expect(() => store.checkKey(euros)).toThrow(LockConfigError);
        store.checkKey('€'.repeat(Math.floor(limit.length / 3)));
      }
    });

    it('reports a corrupted record naming its key and never overwrites it', async () => {
      expect(subject.tamper, 'the store under test must be able to tamper').toBeDefined();
      const texts = [
        'not json {',
        '{"latch":1,"rv":3,"token":"seven","writeId":"w","holder":null}',
        '{"latch":99,"rv":3,"token":1,"writeId":"w","holder":null}',
      ];
      for (const text of texts) {
        const key = freshKey('corrupt');
        await subject.tamper!(key, text);
        const error = await store.read(key).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LockCorruptedError);
        expect((error as LockCorruptedError).key).toBe(key);
        expect((error as Error).message).toContain(key);

        // A store that sees the old record on a failed condition reports it as corrupted.
        const create = await store.write(key, freeRecord(1), { absent: true }).catch((e: unknown) => e);
        if (create instanceof Error) expect(create).toBeInstanceOf(LockCorruptedError);
        else expect(create).toMatchObject({ ok: false });
        if (store.claim) {
          const claim = store.claim(key, { record: heldRecord(1), expiredBefore: Number.MAX_SAFE_INTEGER });
          await expect(claim).rejects.toBeInstanceOf(LockCorruptedError);
        }
        await expect(store.read(key)).rejects.toBeInstanceOf(LockCorruptedError);
      }
    });

    describe('claim', () => {
      const claim: NonNullable<LockStore['claim']> = (key, request) => {
        if (!store.claim) throw new Error(`${name} has no claim`);
        return store.claim(key, request);
      };

      const claimTests = () => {
        it('claims an absent key with token 1', async () => {
          const key = freshKey('claim-absent');
          const record = heldRecord(0);
          const outcome = await claim(key, { record, expiredBefore: 0 });
          expect(outcome.ok).toBe(true);
          if (!outcome.ok) return;
          expect(outcome.record).toEqual({ ...record, token: 1 });
          expect(await store.read(key)).toEqual({ version: outcome.version, record: outcome.record });
        });

        it('claims a free lock, bumps the token and keeps the stored data', async () => {
          const key = freshKey('claim-free');
          const data = { cursor: 'ü-42', steps: [1, 2] };
          expectOk(await store.write(key, freeRecord(5, data), { absent: true }));
          const record = heldRecord(0, { leaseMs: null, expiresAt: null, context: undefined });
          const outcome = await claim(key, { record, expiredBefore: 0 });
          expect(outcome.ok).toBe(true);
          if (!outcome.ok) return;
          expect(outcome.record).toEqual({ ...record, token: 6, data });
          expect(await store.read(key)).toEqual({ version: outcome.version, record: outcome.record });
        });

        it('claims a lease that ended before expiredBefore, and not one that ends after', async () => {
          const key = freshKey('claim-expired');
          const held = heldRecord(3, { expiresAt: 5_000 });
          const version = expectOk(await store.write(key, held, { absent: true }));

          const early = await claim(key, { record: heldRecord(0, { owner: 'b' }), expiredBefore: 5_000 });
          expectClaimConflict(early, { version, record: held });

          const record = heldRecord(0, { owner: 'b', context: undefined });
          const late = await claim(key, { record, expiredBefore: 5_001 });
          expect(late.ok).toBe(true);
          if (!late.ok) return;
          // The previous holder's context is gone: a claim replaces the whole holder.
          expect(late.record).toEqual({ ...record, token: 4 });
          expect(late.record.holder?.context).toBeUndefined();
          expect(late.version).not.toBe(version);
        });

        it('never claims a live fail-closed holder by expiry', async () => {
          const key = freshKey('claim-fail-closed');
          const held = heldRecord(2, { leaseMs: null, expiresAt: null });
          const version = expectOk(await store.write(key, held, { absent: true }));
          const outcome = await claim(key, { record: heldRecord(0), expiredBefore: Number.MAX_SAFE_INTEGER });
          expectClaimConflict(outcome, { version, record: held });
        });

        it('claims a held lock at the version the waiter watched, and not at a stale one', async () => {
          const key = freshKey('claim-version');
          const v1 = expectOk(
            await store.write(key, heldRecord(8, { leaseMs: null, expiresAt: null }), { absent: true }),
          );
          const held = heldRecord(8, { leaseMs: null, expiresAt: null, renewedAt: 1_700_000_002_000 }, [1]);
          const v2 = expectOk(await store.write(key, held, { version: v1 }));

          const stale = await claim(key, { record: heldRecord(0, { owner: 'c' }), version: v1 });
          expectClaimConflict(stale, { version: v2, record: held });

          const record = heldRecord(0, { owner: 'c' });
          const outcome = await claim(key, { record, version: v2 });
          expect(outcome.ok).toBe(true);
          if (!outcome.ok) return;
          expect(outcome.record).toEqual({ ...record, token: 9, data: [1] });
        });

        it('lets exactly one of 20 concurrent claims win', async () => {
          const key = freshKey('claim-race');
          expectOk(await store.write(key, freeRecord(10), { absent: true }));
          const outcomes = await Promise.all(
            Array.from({ length: 20 }, (_, i) =>
              claim(key, { record: heldRecord(0, { owner: `c${i}` }), expiredBefore: 0 }),
            ),
          );
          const winners = outcomes.filter((o) => o.ok);
          expect(winners).toHaveLength(1);
          expect(winners[0]!.record.token).toBe(11);
          for (const loser of outcomes.filter((o) => !o.ok)) {
            expect(loser.current?.record.holder?.owner).toBe(winners[0]!.record.holder?.owner);
          }
        });
      };

      it(options.claim ? 'offers claim' : 'offers no claim', () => {
        expect(typeof store.claim).toBe(options.claim ? 'function' : 'undefined');
      });
      if (options.claim) claimTests();
    });
  });
}
