import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, test, vi } from 'vitest';
import {
  type AcquireOptions,
  checkOptionKeys,
  dynamoStore,
  ensureLockTable,
  type Lock,
  LockClient,
  LockConfigError,
  type LockStore,
  memoryStore,
  s3ListStore,
  s3Store,
} from '../src/index.js';

/** An SDK client whose `send` counts calls and never answers: any request would show. */
function countingSdkClient<C>(): { client: C; requests: () => number } {
  const send = vi.fn(() => new Promise<never>(() => undefined));
  return { client: { send } as unknown as C, requests: () => send.mock.calls.length };
}

const clients: LockClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

function client(store: LockStore): LockClient {
  const made = new LockClient({ store, leaseMs: 10_000 });
  clients.push(made);
  return made;
}

interface Setup {
  /** Calls the entry point with a misspelled option; may throw or reject. */
  call(): unknown;
  /** Requests that reached the store since the call started. */
  requests(): number;
  /** What must still be true after the refusal, e.g. a lock still held. */
  after?(): void;
}

/** Prepares an entry point: a held lock for the Lock methods, a handle for resume and release. */
type Case = [what: string, setup: () => Promise<Setup>, message: string];

/** Acquires `key` for the calls that need a held lock, then counts from zero. */
async function withHeldLock(
  use: (lock: Lock, locks: LockClient, other: LockClient) => unknown,
): Promise<Setup> {
  const store = memoryStore();
  const locks = client(store);
  const other = client(store);
  const lock = await locks.acquire('reports/daily');
  const before = store.requestCount;
  return {
    call: () => use(lock, locks, other),
    requests: () => store.requestCount - before,
    after: () => expect(lock.isHeld).toBe(true),
  };
}

function onClient(use: (locks: LockClient) => unknown): () => Promise<Setup> {
  return async () => {
    const store = memoryStore();
    const locks = client(store);
    return { call: () => use(locks), requests: () => store.requestCount };
  };
}

function onStore(use: (store: LockStore) => unknown): () => Promise<Setup> {
  return async () => {
    const store = memoryStore();
    return { call: () => use(store), requests: () => store.requestCount };
  };
}

function onSdk<C>(use: (client: C) => unknown): () => Promise<Setup> {
  return async () => {
    const sdk = countingSdkClient<C>();
    return { call: () => use(sdk.client), requests: sdk.requests };
  };
}

const never = () => expect.unreachable('the callback must not run');

const CASES: Case[] = [
  [
    'new LockClient()',
    onStore((store) => new LockClient({ store, leaseMS: 1000 } as never)),
    'new LockClient(): unknown option leaseMS; did you mean leaseMs?',
  ],
  [
    'new LockClient({ clock })',
    onStore((store) => new LockClient({ store, clock: { mode: 'untrusted', tolerance: 50 } } as never)),
    'new LockClient({ clock }): unknown option tolerance; did you mean toleranceMs?',
  ],
  [
    'new LockClient({ retry })',
    onStore((store) => new LockClient({ store, retry: { attempt: 3 } } as never)),
    'new LockClient({ retry }): unknown option attempt; did you mean attempts?',
  ],
  [
    'acquire()',
    onClient((locks) => locks.acquire('reports/daily', { waitMS: 100 } as never)),
    'acquire(): unknown option waitMS; did you mean waitMs?',
  ],
  [
    'tryAcquire()',
    onClient((locks) => locks.tryAcquire('reports/daily', { contxt: 'nightly' } as never)),
    'tryAcquire(): unknown option contxt; did you mean context?',
  ],
  [
    'tryAcquire() with an option of acquire() only',
    onClient((locks) => locks.tryAcquire('reports/daily', { waitMs: 100 } as never)),
    'tryAcquire(): unknown option waitMs; tryAcquire() never waits; use acquire(key, { waitMs }) to wait.',
  ],
  [
    'withLock()',
    onClient((locks) => locks.withLock('reports/daily', never, { leaseMS: 5000 } as never)),
    'withLock(): unknown option leaseMS; did you mean leaseMs?',
  ],
  [
    'campaign()',
    onClient((locks) => locks.campaign('leader', { onElected: never, onDemote: never } as never)),
    'campaign(): unknown option onDemote; did you mean onDemoted?',
  ],
  [
    'list()',
    onClient((locks) => locks.list('reports/', { singal: undefined } as never)),
    'list(): unknown option singal; did you mean signal?',
  ],
  [
    'lock.release()',
    () => withHeldLock((lock) => lock.release({ dat: { rows: 1 } } as never)),
    'lock.release(): unknown option dat; did you mean data?',
  ],
  [
    'release(key, handle, options)',
    () => withHeldLock((lock, _, other) => other.release(lock.key, lock.handle, { Data: 1 } as never)),
    'release(key, handle, options): unknown option Data; did you mean data?',
  ],
  [
    'resume()',
    () => withHeldLock((lock, _, other) => other.resume(lock.handle, { heartbeatMS: 1000 } as never)),
    'resume(): unknown option heartbeatMS; did you mean heartbeatMs?',
  ],
  [
    'memoryStore()',
    async () => ({ call: () => memoryStore({ maxRecordByte: 1024 } as never), requests: () => 0 }),
    'memoryStore(): unknown option maxRecordByte; did you mean maxRecordBytes?',
  ],
  [
    's3Store()',
    onSdk<S3Client>((client) => s3Store({ client, bucket: 'locks', prefx: 'locks/' } as never)),
    's3Store(): unknown option prefx; did you mean prefix?',
  ],
  [
    's3ListStore()',
    onSdk<S3Client>((client) => s3ListStore({ client, bucket: 'locks', settleMS: 500 } as never)),
    's3ListStore(): unknown option settleMS; did you mean settleMs?',
  ],
  [
    'dynamoStore()',
    onSdk<DynamoDBClient>((client) => dynamoStore({ client, table: 'locks', partitionkey: 'id' } as never)),
    'dynamoStore(): unknown option partitionkey; did you mean partitionKey?',
  ],
  [
    'ensureLockTable()',
    onSdk<DynamoDBClient>((client) => ensureLockTable(client, { table: 'locks', timeout: 5000 } as never)),
    'ensureLockTable(): unknown option timeout; did you mean timeoutMs?',
  ],
];

describe('every entry point refuses a misspelled option, naming the closest one, before any request', () => {
  test.each(CASES)('%s', async (_what, setup, message) => {
    const entry = await setup();
    let thrown: unknown;
    try {
      await entry.call();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LockConfigError);
    expect((thrown as Error).message).toBe(message);
    expect(entry.requests()).toBe(0);
    entry.after?.();
  });

  test('known options whose value is undefined are accepted', async () => {
    const store = memoryStore();
    const locks = new LockClient({ store, leaseMs: undefined, clock: undefined, retry: {} });
    clients.push(locks);
    const lock = await locks.acquire('reports/daily', { waitMs: undefined, signal: undefined });
    await lock.release();
    await expect(locks.tryAcquire('reports/daily', { context: undefined })).resolves.not.toBeNull();
  });

  test('options built by spreading defaults are checked like any other', async () => {
    const locks = client(memoryStore());
    const defaults = { waitMs: 0, leaseMs: 5000 };
    const fromConfig = { ...defaults, ...{ waitMS: 100 } };
    await expect(locks.acquire('reports/daily', fromConfig as never)).rejects.toThrow(
      'acquire(): unknown option waitMS; did you mean waitMs?',
    );
  });
});

describe('checkOptionKeys', () => {
  const KNOWN = ['waitMs', 'leaseMs', 'heartbeatMs', 'context', 'signal'];
  const check = (options: unknown, hints?: Record<string, string>) => () =>
    checkOptionKeys('acquire()', options, KNOWN, hints);

  test('accepts known keys, whatever their values', () => {
    expect(check({ waitMs: 5, leaseMs: undefined, context: null })).not.toThrow();
    expect(check({})).not.toThrow();
  });

  test.each([
    [{ waitMS: 1 }, 'did you mean waitMs?'],
    [{ WAITMS: 1 }, 'did you mean waitMs?'],
    [{ leasems: 1 }, 'did you mean leaseMs?'],
    [{ heartbeat: 1 }, 'did you mean heartbeatMs?'],
    [{ lease: 1 }, 'did you mean leaseMs?'],
    [{ signl: 1 }, 'did you mean signal?'],
    [{ contxet: 1 }, 'did you mean context?'],
  ])('a near key %j gets the closest known one: %s', (options, hint) => {
    expect(check(options)).toThrow(LockConfigError);
    expect(check(options)).toThrow(`acquire(): unknown option ${Object.keys(options)[0]}; ${hint}`);
  });

  test('a key near none of them lists the options instead of guessing', () => {
    expect(check({ bucket: 'locks' })).toThrow(
      'acquire(): unknown option bucket; the options are waitMs, leaseMs, heartbeatMs, context, signal',
    );
    expect(check({ x: 1 })).toThrow('acquire(): unknown option x; the options are');
  });

  test('an unknown key is refused even when its value is undefined', () => {
    expect(check({ waitMS: undefined })).toThrow('unknown option waitMS; did you mean waitMs?');
  });

  test('the first unknown key is named', () => {
    expect(check({ waitMs: 1, leaseMS: 2, contxt: 3 })).toThrow('unknown option leaseMS;');
  });

  test('a hint replaces the suggestion for a known mistake', () => {
    expect(check({ table: 'locks' }, { table: 'a table goes to the store' })).toThrow(
      'acquire(): unknown option table; a table goes to the store',
    );
  });

  test('values that are not objects are left to the caller', () => {
    expect(check(undefined)).not.toThrow();
    expect(check(null)).not.toThrow();
    expect(check(5)).not.toThrow();
  });

  test("a class instance is the caller's own object, not an options literal", () => {
    class Leader {
      constructor(readonly db: string) {}
      onElected(): void {}
    }
    expect(check(new Leader('db'))).not.toThrow();
    expect(check(Object.assign(Object.create(null), { waitMS: 1 }))).toThrow(/unknown option waitMS/);
  });

  test('a hinted key left undefined asks for nothing and passes', () => {
    expect(check({ table: undefined }, { table: 'a table goes to the store' })).not.toThrow();
  });
});

test('tryAcquire takes an AcquireOptions object whose acquire-only keys are undefined', async () => {
  const locks = new LockClient({ store: memoryStore() });
  const options: AcquireOptions = { waitMs: undefined, signal: undefined, context: 'nightly' };
  const lock = await locks.tryAcquire('reports/daily', options);
  expect(lock?.fencingToken).toBeGreaterThan(0);
  await lock?.release();
  await locks.close();
});
