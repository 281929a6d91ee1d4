import { LockClient, LockConfigError, memoryStore } from '@latch/core';
import { describe, expect, test } from 'vitest';
import { type LockMiddlewareOptions, lock } from '../src/index.js';

const key = (req: { params: { id?: string } }) => req.params.id;

describe('lock() refuses a misspelled option when the middleware is created, before any request', () => {
  test.each<[string, Record<string, unknown>, string]>([
    ['waitMS', { waitMS: 500 }, 'lock(): unknown option waitMS; did you mean waitMs?'],
    ['leaseMS', { leaseMS: 60_000 }, 'lock(): unknown option leaseMS; did you mean leaseMs?'],
    ['onlocked', { onlocked: 'reject' }, 'lock(): unknown option onlocked; did you mean onLocked?'],
    ['keys', { keys: key }, 'lock(): unknown option keys; did you mean key?'],
    ['onLock', { onLock: 'wait' }, 'lock(): unknown option onLock; did you mean onLocked?'],
    ['limits', { limits: 3 }, 'lock(): unknown option limits; did you mean limit?'],
    [
      'an undefined value under an unknown key',
      { timeoutMs: undefined },
      'lock(): unknown option timeoutMs; the options are client, name, key, onLocked, waitMs, leaseMs, limit, retryAfterSeconds',
    ],
    [
      'store, which belongs to the client',
      { store: memoryStore() },
      'lock(): unknown option store; lock() takes a client built on the store: lock({ client: new LockClient({ store }), name, key }).',
    ],
  ])('%s', (_what, extra, message) => {
    const store = memoryStore();
    const client = new LockClient({ store });
    const create = () => lock({ client, name: 'invoice', key, ...extra } as LockMiddlewareOptions);
    expect(create).toThrow(LockConfigError);
    expect(create).toThrow(message);
    expect(store.requestCount).toBe(0);
  });

  test('known options whose value is undefined are accepted', () => {
    const client = new LockClient({ store: memoryStore() });
    expect(
      lock({
        client,
        name: 'invoice',
        key,
        onLocked: undefined,
        waitMs: undefined,
        leaseMs: undefined,
        limit: undefined,
      }),
    ).toBeTypeOf('function');
  });
});
