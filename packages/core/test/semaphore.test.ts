import { describe, expect, test } from 'vitest';
import { lockErrorToHttp } from '../src/http.js';
import {
  LockClient,
  LockConfigError,
  LockCorruptedError,
  LockLimitMismatchError,
  LockTimeoutError,
  memoryStore,
} from '../src/index.js';
import { decodeRecord, encodeRecord, type LockRecord } from '../src/store.js';
import { claimExpressions } from '../src/stores/dynamo-claim-expressions.js';
import { decodeItem, recordAttributes } from '../src/stores/dynamo-item-codec.js';

// What the conformance suite cannot see from outside: the stored form of a semaphore, input
// refused before any request, and the HTTP answer of a full semaphore.

const slot = (lockId: string, token: number, expiresAt: number | null) => ({
  owner: `owner-${lockId}`,
  lockId,
  acquiredAt: 1000,
  renewedAt: 1000,
  leaseMs: expiresAt === null ? null : expiresAt - 1000,
  expiresAt,
  token,
  writeId: `w-${lockId}`,
});

const { token: _token, writeId: _writeId, ...lastToEnd } = slot('b', 7, 9000);
const semaphore: LockRecord = {
  token: 7,
  holder: lastToEnd,
  writeId: 'w-record',
  limit: 3,
  holders: [slot('a', 5, 5000), slot('b', 7, 9000)],
  data: { batch: 2 },
};

describe('the stored form of a semaphore', () => {
  test('JSON (S3, memory): every holder, its token and write id survive a round trip', () => {
    expect(decodeRecord('k', encodeRecord(semaphore))).toEqual(semaphore);
  });

  test('DynamoDB attributes: the same record back', () => {
    const attributes = recordAttributes(semaphore, 4);
    expect(attributes.limit).toEqual({ N: '3' });
    const item = { pk: { S: 'k' }, ...attributes };
    expect(decodeItem('k', item, new Set(['pk'])).record).toEqual(semaphore);
  });

  test.each([
    ['a limit below 2', { limit: 1 }, /limit is not an integer of 2 or more/],
    ['holders that are not a list', { holders: {} }, /holders is not a list/],
    [
      'a holder token above the record token',
      { holders: [slot('a', 8, 5000)] },
      /token is not an integer up to/,
    ],
    ['a holder without writeId', { holders: [{ ...slot('a', 5, 5000), writeId: 3 }] }, /writeId is missing/],
  ])('a record with %s is reported as corrupted, never reused', (_what, change, message) => {
    const text = JSON.stringify({ ...JSON.parse(encodeRecord(semaphore)), ...change });
    expect(() => decodeRecord('k', text)).toThrow(LockCorruptedError);
    expect(() => decodeRecord('k', text)).toThrow(message);
  });

  test("DynamoDB's one-request claim turns the record back into a plain lock", () => {
    const { update } = claimExpressions({
      record: { token: 0, holder: slot('c', 1, 2000), writeId: 'w' },
      expiredBefore: 1500,
    });
    expect(update).toMatch(/REMOVE .*#limit, #holders$/);
  });
});

describe('limit is checked before any request', () => {
  test.each([0, 1.5, 101, '2', Number.NaN, null])('limit %s is refused with how to fix it', async (limit) => {
    const store = memoryStore();
    const locks = new LockClient({ store });
    await expect(locks.acquire('k', { limit: limit as number })).rejects.toThrow(
      /limit must be a whole number from 1 \(a lock\) to 100/,
    );
    await expect(locks.tryAcquire('k', { limit: limit as number })).rejects.toThrow(LockConfigError);
    expect(store.requestCount).toBe(0);
  });

  test('a call with another limit than this client holds the key with is refused without a request', async () => {
    const store = memoryStore();
    const locks = new LockClient({ store });
    const held = await locks.acquire('k', { limit: 2 });
    const before = store.requestCount;
    const refused = locks.tryAcquire('k', { limit: 3 });
    await expect(refused).rejects.toThrow(LockConfigError);
    await expect(refused).rejects.toThrow(/limit 2.*limit 3/);
    await expect(locks.acquire('k')).rejects.toThrow(/limit 2.*limit 1/);
    expect(store.requestCount).toBe(before);
    await held.release();
    // Once nothing here holds or awaits it, the key may take another limit.
    const plain = await locks.acquire('k');
    expect((await locks.inspect('k')).limit).toBe(1);
    await plain.release();
    await locks.close();
  });

  test.each([
    ['not an array', 'k'],
    ['empty', []],
    ['a key twice', ['a', 'b', 'a']],
    ['a key that is not a string', ['a', 7]],
  ])('acquireAll with keys %s is refused before any request', async (_what, keys) => {
    const store = memoryStore();
    const locks = new LockClient({ store });
    await expect(locks.acquireAll(keys as string[])).rejects.toThrow(LockConfigError);
    await expect(locks.acquireAll(['a', 'b'], { limit: 0 })).rejects.toThrow(LockConfigError);
    expect(store.requestCount).toBe(0);
  });
});

describe('a full semaphore over HTTP', () => {
  test('answers 429 with Retry-After and a problem body; a held lock stays 423', () => {
    const full = lockErrorToHttp(new LockTimeoutError('k', 100, undefined, { limit: 3 }))!;
    expect(full.status).toBe(429);
    expect(full.headers['Retry-After']).toBe('1');
    expect(full.headers['Content-Type']).toBe('application/problem+json');
    expect(full.body).toMatchObject({ status: 429, type: 'urn:latch:problem:limit-reached' });
    expect(full.body.detail).toContain('At most 3');
    expect(lockErrorToHttp(new LockTimeoutError('k', 100, undefined))!.status).toBe(423);
  });

  test('holders with another limit are a mistake of the server: 500, not 400', async () => {
    const store = memoryStore();
    const a = new LockClient({ store });
    const b = new LockClient({ store });
    const held = await a.acquire('k', { limit: 3 });
    const mismatch = await b.tryAcquire('k', { limit: 5 }).catch((error: unknown) => error);
    expect(mismatch).toBeInstanceOf(LockLimitMismatchError);
    expect(mismatch).toMatchObject({ key: 'k', heldLimit: 3, askedLimit: 5 });
    const answer = lockErrorToHttp(mismatch)!;
    expect(answer.status).toBe(500);
    expect(answer.body.type).toBe('urn:latch:problem:lock-limit-mismatch');
    expect(lockErrorToHttp(new LockConfigError('bad key'))!.status).toBe(400);
    await held.release();
    await Promise.all([a.close(), b.close()]);
  });

  test('checkAcquireOptions refuses what acquire would, with no request: a bad limit, or one the store cannot keep', () => {
    const store = memoryStore();
    const locks = new LockClient({ store });
    expect(() => locks.checkAcquireOptions({ limit: 101 })).toThrow(LockConfigError);
    expect(() => locks.checkAcquireOptions({ limitt: 2 } as never)).toThrow(/limit/);
    expect(() => locks.checkAcquireOptions({ limit: 3, leaseMs: 5_000 })).not.toThrow();
    expect(store.requestCount).toBe(0);
  });

  test('a waiter that times out on a full semaphore gets a LockTimeoutError that names the limit', async () => {
    const store = memoryStore();
    const a = new LockClient({ store });
    const b = new LockClient({ store });
    const held = [await a.acquire('k', { limit: 2 }), await a.acquire('k', { limit: 2 })];
    const timeout = b.acquire('k', { limit: 2, waitMs: 50 });
    await expect(timeout).rejects.toThrow(LockTimeoutError);
    await expect(timeout).rejects.toMatchObject({ limit: 2 });
    await expect(b.acquire('k', { limit: 2, waitMs: 0 })).rejects.toMatchObject({ limit: 2 });
    await Promise.all(held.map((lock) => lock.release()));
    await Promise.all([a.close(), b.close()]);
  });
});
