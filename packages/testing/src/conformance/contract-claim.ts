// The optional one-request claim: takes a record that is absent, free, expired before a time,
// or at the version a waiter watched, bumping the token; never a live or fail-closed lease.
import { expect, it } from 'vitest';
import { type ContractRun, expectClaimConflict, expectOk, freshKey } from './contract-run.js';
import { freeRecord, heldRecord } from './records.js';
import type { StoreUnderContract } from './store-shapes.js';

/** `offers claim` (or `offers no claim`), and with `claim`, the cases of claim itself. */
export function claimCases(run: ContractRun, offered: boolean): void {
  const claim: NonNullable<StoreUnderContract['claim']> = (key, request) => {
    const store = run.store();
    if (!store.claim) throw new Error(`${run.name} has no claim`);
    return store.claim(key, request);
  };

  it(offered ? 'offers claim' : 'offers no claim', () => {
    expect(typeof run.store().claim).toBe(offered ? 'function' : 'undefined');
  });
  if (!offered) return;

  it('claims an absent key with token 1', async () => {
    const store = run.store();
    const key = freshKey('claim-absent');
    const record = heldRecord(0);
    const outcome = await claim(key, { record, expiredBefore: 0 });
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.record).toEqual({ ...record, token: 1 });
    expect(await store.read(key)).toEqual({ version: outcome.version, record: outcome.record });
  });

  it('claims a free lock, bumps the token and keeps the stored data', async () => {
    const store = run.store();
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
    const store = run.store();
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
    const store = run.store();
    const key = freshKey('claim-fail-closed');
    const held = heldRecord(2, { leaseMs: null, expiresAt: null });
    const version = expectOk(await store.write(key, held, { absent: true }));
    const outcome = await claim(key, { record: heldRecord(0), expiredBefore: Number.MAX_SAFE_INTEGER });
    expectClaimConflict(outcome, { version, record: held });
  });

  it('claims a held lock at the version the waiter watched, and not at a stale one', async () => {
    const store = run.store();
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
    const store = run.store();
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
}
