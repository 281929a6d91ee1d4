import { expect, test } from 'vitest';
import {
  LockConfigError,
  LockCorruptedError,
  LockLostError,
  LockStoreError,
  LockTimeoutError,
  lockErrorToHttp,
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
