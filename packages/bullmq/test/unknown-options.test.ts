import { LockClient, LockConfigError, memoryStore } from '@latch/core';
import { describe, expect, test } from 'vitest';
import { type JobLockOptions, LockedWorker, withLock } from '../src/index.js';

const processor = async () => 'done';
const key = () => 'customer/1';

/** Builds the entry point with `extra` added to otherwise valid lock options. */
type Entry = (lock: JobLockOptions) => unknown;
const viaWithLock: Entry = (lock) => withLock(processor, lock);
// Refused before the Worker is constructed: nothing connects to Redis.
const viaLockedWorker: Entry = (lock) =>
  new LockedWorker('customers', processor, {
    connection: { host: '127.0.0.1', port: 1 },
    lock,
  });

const W = 'withLock(processor, options)';
const L = 'new LockedWorker(name, processor, { lock })';

describe('withLock and LockedWorker refuse a misspelled option at start-up, before any request', () => {
  test.each<[string, Entry, Record<string, unknown>, string]>([
    [
      'withLock: leaseMS',
      viaWithLock,
      { leaseMS: 30_000 },
      `${W}: unknown option leaseMS; did you mean leaseMs?`,
    ],
    [
      'withLock: onlocked',
      viaWithLock,
      { onlocked: 'fail' },
      `${W}: unknown option onlocked; did you mean onLocked?`,
    ],
    [
      'withLock: maxDelay',
      viaWithLock,
      { maxDelay: 5 },
      `${W}: unknown option maxDelay; did you mean maxDelays?`,
    ],
    [
      'withLock: backoff.base',
      viaWithLock,
      { backoff: { base: 100 } },
      `${W} backoff: unknown option base; did you mean baseMs?`,
    ],
    [
      'withLock: waitMs, which a job lock does not take',
      viaWithLock,
      { waitMs: 1000 },
      `${W}: unknown option waitMs; a job lock never waits (it takes one try, so no worker slot is held waiting); a contended job is delayed, see onLocked and backoff.`,
    ],
    ['withLock: limits', viaWithLock, { limits: 2 }, `${W}: unknown option limits; did you mean limit?`],
    ['LockedWorker: Limit', viaLockedWorker, { Limit: 2 }, `${L}: unknown option Limit; did you mean limit?`],
    [
      'LockedWorker: heartbeatMS',
      viaLockedWorker,
      { heartbeatMS: 1000 },
      `${L}: unknown option heartbeatMS; did you mean heartbeatMs?`,
    ],
    [
      'LockedWorker: Context',
      viaLockedWorker,
      { Context: () => 'x' },
      `${L}: unknown option Context; did you mean context?`,
    ],
  ])('%s', (_what, entry, extra, message) => {
    const store = memoryStore();
    const client = new LockClient({ store });
    const create = () => entry({ client, key, ...extra } as JobLockOptions);
    expect(create).toThrow(LockConfigError);
    expect(create).toThrow(message);
    expect(store.requestCount).toBe(0);
  });

  test('known options whose value is undefined are accepted', () => {
    const client = new LockClient({ store: memoryStore() });
    expect(
      withLock(processor, {
        client,
        key,
        limit: undefined,
        leaseMs: undefined,
        backoff: { baseMs: undefined },
        context: undefined,
      }),
    ).toBeTypeOf('function');
  });
});
