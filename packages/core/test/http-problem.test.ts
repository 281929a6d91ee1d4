import { expect, test } from 'vitest';
import { lockErrorToHttp, lockStoreLogEntry } from '../src/http.js';
import {
  LockConfigError,
  LockCorruptedError,
  LockLostError,
  LockStoreError,
  type LockStoreErrorReason,
  LockTimeoutError,
} from '../src/index.js';

const now = 1_700_000_000_000;

test('a held lock answers 423 with Retry-After rounded up to whole seconds, at least 1', () => {
  const held = (expiresAt: number | null) =>
    lockErrorToHttp(
      new LockTimeoutError('k', 0, { owner: 'host:1:ab', acquiredAt: now - 5000, expiresAt }),
      now,
    );
  expect(held(now + 12_300)).toMatchObject({
    status: 423,
    headers: { 'Retry-After': '13', 'Content-Type': 'application/problem+json' },
    body: { status: 423, title: 'Locked', retryAfterSeconds: 13 },
  });
  expect(held(now - 50)?.headers['Retry-After']).toBe('1');
  expect(held(null)?.headers['Retry-After']).toBeUndefined();
  expect(JSON.stringify(held(now + 1000))).not.toContain('host:1:ab');
});

test('lockedRetryAfterSeconds caps a 423 Retry-After, never above what the lease has left', () => {
  const held = (expiresAt: number | null, lockedRetryAfterSeconds?: number) =>
    lockErrorToHttp(
      new LockTimeoutError('k', 0, { owner: 'host:1:ab', acquiredAt: now - 5000, expiresAt }),
      now,
      lockedRetryAfterSeconds === undefined ? {} : { lockedRetryAfterSeconds },
    );
  // A request-scoped lock: 30 s of lease left, but the holder will be done long before.
  expect(held(now + 30_000, 1)).toMatchObject({
    headers: { 'Retry-After': '1' },
    body: { retryAfterSeconds: 1 },
  });
  expect(held(now + 30_000, 5)?.headers['Retry-After']).toBe('5');
  // Less lease left than the cap: the lease's end.
  expect(held(now + 2_100, 5)?.headers['Retry-After']).toBe('3');
  // A fail-closed holder has no end: the cap alone.
  expect(held(null, 2)?.headers['Retry-After']).toBe('2');
  for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    expect(() => held(now + 30_000, bad)).toThrow(
      /lockedRetryAfterSeconds must be a whole number of seconds, at least 1/,
    );
  }
});

test('lost → 409, bad key → 400, store trouble → 503, anything else → undefined', () => {
  expect(lockErrorToHttp(new LockLostError('k', 'stolen'))?.status).toBe(409);
  expect(lockErrorToHttp(new LockConfigError('Lock key is 5000 bytes'))?.body.detail).toContain('5000 bytes');
  expect(lockErrorToHttp(new LockStoreError('down', { retryable: true }))).toMatchObject({
    status: 503,
    headers: { 'Retry-After': '1' },
  });
  expect(lockErrorToHttp(new LockCorruptedError('k', 'bad'))).toBeUndefined();
  expect(lockErrorToHttp(new Error('other'))).toBeUndefined();
});

const storeError = (reason: LockStoreErrorReason, retryable: boolean, message = 'S3 PutObject failed') =>
  new LockStoreError(message, { retryable, reason, code: 'LOCK_STORE_X' });

test('a store set up wrong answers 500 lock-store-misconfigured, without Retry-After or the store message', () => {
  for (const reason of ['misconfigured', 'denied'] as const) {
    const answer = lockErrorToHttp(
      storeError(reason, false, 'S3 PutObject failed: S3 bucket "secret-bucket" does not exist'),
    );
    expect(answer).toEqual({
      status: 500,
      headers: { 'Content-Type': 'application/problem+json' },
      body: {
        type: 'urn:latch:problem:lock-store-misconfigured',
        title: 'Internal Server Error',
        status: 500,
        detail: "The lock store is misconfigured. The server's operator should check the server log.",
      },
    });
    expect(JSON.stringify(answer)).not.toContain('secret-bucket');
  }
});

test('an outage, throttling or a closed client answers 503 with Retry-After; an unknown failure by retryable', () => {
  const unavailable = lockErrorToHttp(storeError('unavailable', true));
  expect(unavailable).toMatchObject({
    status: 503,
    headers: { 'Retry-After': '1', 'Content-Type': 'application/problem+json' },
    body: {
      type: 'urn:latch:problem:lock-store-unavailable',
      title: 'Service Unavailable',
      detail: 'The lock store could not be reached. Retry later.',
    },
  });
  expect(lockErrorToHttp(storeError('throttled', true))).toMatchObject({
    status: 503,
    headers: { 'Retry-After': '1' },
    body: { detail: 'The lock store is busy. Retry later.' },
  });
  expect(lockErrorToHttp(storeError('closed', false))).toMatchObject({
    status: 503,
    headers: { 'Retry-After': '1' },
  });
  // An outage is 503 whatever retryable says, and the reason decides, not the code.
  expect(lockErrorToHttp(storeError('unavailable', false))?.status).toBe(503);
  expect(lockErrorToHttp(storeError('unknown', true))?.status).toBe(503);
  expect(lockErrorToHttp(storeError('unknown', false))).toMatchObject({
    status: 500,
    headers: { 'Content-Type': 'application/problem+json' },
    body: { type: 'urn:latch:problem:lock-store-failed', title: 'Internal Server Error' },
  });
  expect(lockErrorToHttp(storeError('unknown', false))?.headers['Retry-After']).toBeUndefined();
});

test('lockStoreLogEntry: error level for a configuration to fix, warn for an outage, one line, no credentials', () => {
  expect(
    lockStoreLogEntry(
      storeError('misconfigured', false, 'S3 PutObject failed: S3 bucket "b" does not exist'),
    ),
  ).toEqual({
    level: 'error',
    message:
      'lock store misconfigured (reason misconfigured, code LOCK_STORE_X): S3 PutObject failed: S3 bucket "b" does not exist',
  });
  expect(lockStoreLogEntry(storeError('denied', false))).toMatchObject({
    level: 'error',
    message: expect.stringMatching(/^lock store access denied \(reason denied/),
  });
  expect(lockStoreLogEntry(storeError('unknown', false)).level).toBe('error');
  for (const reason of ['unavailable', 'throttled', 'closed'] as const) {
    expect(lockStoreLogEntry(storeError(reason, true)).level).toBe('warn');
  }
  expect(lockStoreLogEntry(storeError('unavailable', true)).message).toMatch(
    /^lock store unavailable \(reason unavailable, code LOCK_STORE_X\): /,
  );
  // A custom store's message, on several lines and with a key in it.
  const entry = lockStoreLogEntry(storeError('unknown', false, 'failed\n  with key AKIAIOSFODNN7EXAMPLE'));
  expect(entry.message).not.toContain('\n');
  expect(entry.message).not.toContain('AKIAIOSFODNN7EXAMPLE');
});

test('a LockStoreError without a reason is of unknown kind, not a configuration error', () => {
  const error = new LockStoreError('x', { retryable: true });
  expect(error.reason).toBe('unknown');
  expect(error.isConfigurationError).toBe(false);
});

test('lockStoreLogEntry keeps a long lock key the operator needs, and still hides credentials in URLs and headers', () => {
  const key = `deploy/${'0123456789abcdef'.repeat(3)}`;
  const { message } = lockStoreLogEntry(
    storeError(
      'unavailable',
      true,
      `S3 PutObject for lock "${key}" could not connect to http://admin:hunter2@s3.local:9000 (x-amz-security-token: FwoGZXIvYXdzEXAMPLE)`,
    ),
  );
  expect(message).toContain(`lock "${key}"`);
  expect(message).toContain('http://[redacted]@s3.local:9000');
  expect(message).not.toContain('hunter2');
  expect(message).not.toContain('FwoGZXIvYXdzEXAMPLE');
});
