import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { type DynamoDBLocal, type S3Server, startDynamoDBLocal, startS3Server } from '@latch/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  dynamoStore,
  ensureLockTable,
  type Lock,
  LockClient,
  type LockClientOptions,
  LockConfigError,
  type LockStore,
  memoryStore,
  s3Store,
} from '../../src/index.js';
import { countRequests, type RequestCounter } from '../helpers/count-requests.js';

// Every public entry point, fed invalid values, must throw a LockConfigError that names what is
// wrong, before a single request reaches the store.

/** A store under test, with a held lock to call Lock methods on and a way to count requests. */
interface Backend {
  name: 'memory' | 's3' | 'dynamodb';
  store: LockStore;
  locks: LockClient;
  held: Lock;
  /** The backend's SDK client (S3Client or DynamoDBClient), for the store factory's own cases. */
  sdk?: unknown;
  /** Requests that reached the store since the last reset. */
  requests(): number;
  resetRequests(): void;
  stop(): Promise<void>;
}

interface BadCall {
  entry: string;
  value: string;
  call: (b: Backend) => unknown;
  /** The error message must say what was wrong. */
  mentions: RegExp;
}

const cyclic: Record<string, unknown> = { name: 'loop' };
cyclic.self = cyclic;

const BAD_KEYS: Array<[string, unknown]> = [
  ['empty', ''],
  ['5 KB', 'k'.repeat(5 * 1024)],
  ['lone surrogate', 'jobs/\uD800'],
  ['a number', 42],
  ['null', null],
  ['an object', { key: 'jobs/a' }],
];
const BAD_DATA: Array<[string, unknown]> = [
  ['cyclic', cyclic],
  ['BigInt', { amount: 10n }],
  ['500 KB', { blob: 'x'.repeat(500 * 1024) }],
  ['NaN', { ratio: Number.NaN }],
  ['a Date', { at: new Date(0) }],
  ['undefined', undefined],
];
const NOT_POSITIVE = [0, -1, Number.NaN];
const NOT_FINITE_POSITIVE = [...NOT_POSITIVE, Number.POSITIVE_INFINITY];

/** A handle that decodes to `key` (handles are base64url JSON behind a "latch1." prefix). */
function handleFor(key: unknown): string {
  const json = JSON.stringify({ k: key, l: 'lock-id', o: 'owner', t: 1 });
  return `latch1.${Buffer.from(json, 'utf8').toString('base64url')}`;
}

const show = (value: unknown) =>
  typeof value === 'string' && value.length > 20
    ? `'${value.slice(0, 8)}…' (${value.length})`
    : String(value);

function clientOption(entry: string, options: Partial<LockClientOptions>, mentions: RegExp): BadCall {
  const [name, value] = Object.entries(options)[0]!;
  return {
    entry,
    value: `${name}: ${typeof value === 'object' ? JSON.stringify(value) : show(value)}`,
    call: (b) => new LockClient({ store: b.store, ...options }),
    mentions,
  };
}

const BAD_CALLS: BadCall[] = [
  // new LockClient(options)
  {
    entry: 'new LockClient',
    value: 'no options',
    call: () => new LockClient(undefined as never),
    mentions: /options/,
  },
  { entry: 'new LockClient', value: 'no store', call: () => new LockClient({} as never), mentions: /store/ },
  ...NOT_POSITIVE.map((v) => clientOption('new LockClient', { leaseMs: v }, /leaseMs/)),
  ...NOT_FINITE_POSITIVE.map((v) => clientOption('new LockClient', { heartbeatMs: v }, /heartbeatMs/)),
  clientOption('new LockClient', { heartbeatMs: 40_000 }, /heartbeatMs.*shorter than leaseMs/),
  ...NOT_FINITE_POSITIVE.map((v) => clientOption('new LockClient', { pollMs: v }, /pollMs/)),
  clientOption('new LockClient', { owner: '' }, /owner/),
  clientOption('new LockClient', { owner: 42 as never }, /owner/),
  clientOption('new LockClient', { clock: 'sundial' as never }, /clock/),
  ...[-1, Number.NaN, Number.POSITIVE_INFINITY].map((v) =>
    clientOption('new LockClient', { clock: { mode: 'trusted', toleranceMs: v } }, /toleranceMs/),
  ),
  clientOption('new LockClient', { clock: { time: { now: 5 } as never } }, /clock\.time/),
  ...[0, -1, Number.NaN, Number.POSITIVE_INFINITY].map((v) =>
    clientOption('new LockClient', { retry: { attempts: v } }, /retry\.attempts/),
  ),
  ...NOT_POSITIVE.map((v) => clientOption('new LockClient', { retry: { baseMs: v } }, /retry\.baseMs/)),

  // Every call that takes a key.
  ...BAD_KEYS.flatMap(([label, key]): BadCall[] => {
    const k = key as string;
    return [
      { entry: 'acquire', value: `key ${label}`, call: (b) => b.locks.acquire(k), mentions: /key/i },
      { entry: 'tryAcquire', value: `key ${label}`, call: (b) => b.locks.tryAcquire(k), mentions: /key/i },
      {
        entry: 'withLock',
        value: `key ${label}`,
        call: (b) => b.locks.withLock(k, () => 1),
        mentions: /key/i,
      },
      { entry: 'inspect', value: `key ${label}`, call: (b) => b.locks.inspect(k), mentions: /key/i },
      {
        entry: 'release',
        value: `key ${label}`,
        call: (b) => b.locks.release(k, handleFor(k)),
        mentions: /key/i,
      },
      {
        entry: 'resume',
        value: `handle for key ${label}`,
        call: (b) => b.locks.resume(handleFor(k)),
        mentions: /key|handle/i,
      },
      {
        entry: 'forceRelease',
        value: `key ${label}`,
        call: (b) => b.locks.forceRelease(k),
        mentions: /key/i,
      },
      {
        entry: 'campaign',
        value: `key ${label}`,
        call: (b) => b.locks.campaign(k, { onElected: () => undefined }),
        mentions: /key/i,
      },
    ];
  }),

  // acquire / tryAcquire / withLock / campaign options.
  ...[-1, Number.NaN].map(
    (v): BadCall => ({
      entry: 'acquire',
      value: `waitMs: ${v}`,
      call: (b) => b.locks.acquire('jobs/a', { waitMs: v }),
      mentions: /waitMs/,
    }),
  ),
  ...NOT_POSITIVE.flatMap((v): BadCall[] => [
    {
      entry: 'acquire',
      value: `leaseMs: ${v}`,
      call: (b) => b.locks.acquire('jobs/a', { leaseMs: v }),
      mentions: /leaseMs/,
    },
    {
      entry: 'tryAcquire',
      value: `leaseMs: ${v}`,
      call: (b) => b.locks.tryAcquire('jobs/a', { leaseMs: v }),
      mentions: /leaseMs/,
    },
    {
      entry: 'campaign',
      value: `leaseMs: ${v}`,
      call: (b) => b.locks.campaign('jobs/a', { leaseMs: v, onElected: () => undefined }),
      mentions: /leaseMs/,
    },
  ]),
  ...NOT_FINITE_POSITIVE.flatMap((v): BadCall[] => [
    {
      entry: 'acquire',
      value: `heartbeatMs: ${v}`,
      call: (b) => b.locks.acquire('jobs/a', { heartbeatMs: v }),
      mentions: /heartbeatMs/,
    },
    {
      entry: 'acquire',
      value: `lockAtLeastMs: ${v}`,
      call: (b) => b.locks.acquire('jobs/a', { lockAtLeastMs: v }),
      mentions: /lockAtLeastMs/,
    },
    {
      entry: 'withLock',
      value: `heartbeatMs: ${v}`,
      call: (b) => b.locks.withLock('jobs/a', () => 1, { heartbeatMs: v }),
      mentions: /heartbeatMs/,
    },
  ]),
  {
    entry: 'acquire',
    value: 'context: 42',
    call: (b) => b.locks.acquire('jobs/a', { context: 42 as never }),
    mentions: /context/,
  },
  {
    entry: 'acquire',
    value: 'context: 2 000 chars',
    call: (b) => b.locks.acquire('jobs/a', { context: 'c'.repeat(2000) }),
    mentions: /context/,
  },
  {
    entry: 'acquire',
    value: 'context: lone surrogate',
    call: (b) => b.locks.acquire('jobs/a', { context: '\uDC00' }),
    mentions: /context/,
  },
  {
    entry: 'acquire',
    value: 'signal: not an AbortSignal',
    call: (b) => b.locks.acquire('jobs/a', { signal: 'stop' as never }),
    mentions: /signal/,
  },
  {
    entry: 'acquire',
    value: 'onLost: not a function',
    call: (b) => b.locks.acquire('jobs/a', { onLost: 'log' as never }),
    mentions: /onLost/,
  },
  {
    entry: 'withLock',
    value: 'fn: not a function',
    call: (b) => b.locks.withLock('jobs/a', 'run' as never),
    mentions: /function/,
  },
  {
    entry: 'campaign',
    value: 'no onElected',
    call: (b) => b.locks.campaign('jobs/a', {} as never),
    mentions: /onElected/,
  },
  {
    entry: 'campaign',
    value: 'signal: not an AbortSignal',
    call: (b) => b.locks.campaign('jobs/a', { onElected: () => undefined, signal: {} as never }),
    mentions: /signal/,
  },

  // Handles.
  {
    entry: 'release',
    value: 'handle: not a handle',
    call: (b) => b.locks.release('jobs/a', 'abc'),
    mentions: /handle/,
  },
  {
    entry: 'release',
    value: 'handle: truncated',
    call: (b) => b.locks.release('jobs/a', 'latch1.eyJr'),
    mentions: /handle/,
  },
  {
    entry: 'release',
    value: 'handle of another key',
    call: (b) => b.locks.release('jobs/b', b.held.handle),
    mentions: /handle/,
  },
  { entry: 'resume', value: 'handle: 42', call: (b) => b.locks.resume(42 as never), mentions: /handle/ },
  ...NOT_FINITE_POSITIVE.map(
    (v): BadCall => ({
      entry: 'resume',
      value: `heartbeatMs: ${v}`,
      call: (b) => b.locks.resume(b.held.handle, { heartbeatMs: v }),
      mentions: /heartbeatMs/,
    }),
  ),

  // Lock methods and data.
  ...NOT_POSITIVE.map(
    (v): BadCall => ({
      entry: 'Lock.extend',
      value: String(v),
      call: (b) => b.held.extend(v),
      mentions: /extend/,
    }),
  ),
  ...BAD_DATA.flatMap(([label, data]): BadCall[] => [
    { entry: 'Lock.update', value: `data ${label}`, call: (b) => b.held.update(data), mentions: /data/i },
    {
      entry: 'Lock.release',
      value: `data ${label}`,
      call: (b) => b.held.release({ data }),
      mentions: /data/i,
    },
    {
      entry: 'release(key, handle)',
      value: `data ${label}`,
      call: (b) => b.locks.release(b.held.key, b.held.handle, { data }),
      mentions: /data/i,
    },
  ]),
];

/** Store option cases: each backend checks its own factory. */
function storeOptionCases(name: Backend['name']): BadCall[] {
  if (name === 'memory') {
    return [0, -1, Number.NaN, Number.POSITIVE_INFINITY].map((v) => ({
      entry: 'memoryStore',
      value: `maxRecordBytes: ${v}`,
      call: () => memoryStore({ maxRecordBytes: v }),
      mentions: /maxRecordBytes/,
    }));
  }
  if (name === 's3') {
    const s3 = (b: Backend) => b.sdk as S3Client;
    return [
      { entry: 's3Store', value: 'no options', call: () => s3Store(undefined as never), mentions: /options/ },
      {
        entry: 's3Store',
        value: 'no client',
        call: () => s3Store({ bucket: 'locks' } as never),
        mentions: /client/,
      },
      {
        entry: 's3Store',
        value: "bucket: ''",
        call: (b) => s3Store({ client: s3(b), bucket: '' }),
        mentions: /bucket/,
      },
      {
        entry: 's3Store',
        value: 'bucket: 42',
        call: (b) => s3Store({ client: s3(b), bucket: 42 as never }),
        mentions: /bucket/,
      },
      {
        entry: 's3Store',
        value: 'prefix: 42',
        call: (b) => s3Store({ client: s3(b), bucket: 'locks', prefix: 42 as never }),
        mentions: /prefix/,
      },
      {
        entry: 's3Store',
        value: 'prefix: 5 KB',
        call: (b) => s3Store({ client: s3(b), bucket: 'locks', prefix: 'p'.repeat(5 * 1024) }),
        mentions: /prefix/,
      },
      ...[0, -1, Number.NaN, Number.POSITIVE_INFINITY].map(
        (v): BadCall => ({
          entry: 's3Store',
          value: `maxRecordBytes: ${v}`,
          call: (b) => s3Store({ client: s3(b), bucket: 'locks', maxRecordBytes: v }),
          mentions: /maxRecordBytes/,
        }),
      ),
    ];
  }
  const dynamodb = (b: Backend) => b.sdk as DynamoDBClient;
  return [
    {
      entry: 'dynamoStore',
      value: 'no options',
      call: () => dynamoStore(undefined as never),
      mentions: /options/,
    },
    {
      entry: 'dynamoStore',
      value: 'no client',
      call: () => dynamoStore({ table: 'locks' } as never),
      mentions: /client/,
    },
    {
      entry: 'dynamoStore',
      value: "table: ''",
      call: (b) => dynamoStore({ client: dynamodb(b), table: '' }),
      mentions: /table/,
    },
    {
      entry: 'dynamoStore',
      value: 'table: 42',
      call: (b) => dynamoStore({ client: dynamodb(b), table: 42 as never }),
      mentions: /table/,
    },
    {
      entry: 'dynamoStore',
      value: "partitionKey: 'token' (a name Latch writes)",
      call: (b) => dynamoStore({ client: dynamodb(b), table: 'locks', partitionKey: 'token' }),
      mentions: /token/,
    },
    {
      entry: 'dynamoStore',
      value: 'sortKeyValue without sortKey',
      call: (b) => dynamoStore({ client: dynamodb(b), table: 'locks', sortKeyValue: 'x' }),
      mentions: /sortKey/,
    },
    {
      entry: 'dynamoStore',
      value: "sortKeyValue: ''",
      call: (b) => dynamoStore({ client: dynamodb(b), table: 'locks', sortKey: 'sk', sortKeyValue: '' }),
      mentions: /sortKeyValue/,
    },
  ];
}

async function expectConfigErrorWithoutRequests(backend: Backend, bad: BadCall): Promise<void> {
  backend.resetRequests();
  const error = await (async () => bad.call(backend))().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'expected a LockConfigError').toBeInstanceOf(LockConfigError);
  expect((error as Error).message).toMatch(bad.mentions);
  expect(backend.requests(), 'requests sent before the error').toBe(0);
}

const backends: Record<Backend['name'], () => Promise<Backend>> = {
  async memory() {
    // The memory store has no wire: count the store calls instead.
    const inner = memoryStore();
    let calls = 0;
    const counted =
      <A extends unknown[], R>(fn: (...args: A) => R) =>
      (...args: A) => {
        calls++;
        return fn(...args);
      };
    const store: LockStore = {
      ...inner,
      read: counted(inner.read.bind(inner)),
      write: counted(inner.write.bind(inner)),
      delete: counted(inner.delete.bind(inner)),
    };
    return withHeldLock({
      name: 'memory',
      store,
      requests: () => calls,
      resetRequests: () => {
        calls = 0;
      },
      stop: async () => undefined,
    });
  },
  async s3() {
    const server: S3Server = await startS3Server({ bucket: 'locks' });
    const sdk = new S3Client(server.clientConfig());
    const counter = countRequests(sdk);
    return withHeldLock({
      name: 's3',
      store: s3Store({ client: sdk, bucket: 'locks' }),
      sdk,
      // What the SDK sent and what the server received must both be nothing.
      requests: () => Math.max(counter.count, server.requestLog.length),
      resetRequests: () => {
        counter.reset();
        server.resetRequestLog();
      },
      stop: async () => {
        sdk.destroy();
        await server.stop();
      },
    });
  },
  async dynamodb() {
    const ddb: DynamoDBLocal = await startDynamoDBLocal();
    const sdk = new DynamoDBClient({
      endpoint: ddb.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
    });
    await ensureLockTable(sdk, { table: 'locks' });
    const counter: RequestCounter = countRequests(sdk);
    return withHeldLock({
      name: 'dynamodb',
      store: dynamoStore({ client: sdk, table: 'locks' }),
      sdk,
      requests: () => counter.count,
      resetRequests: () => counter.reset(),
      stop: async () => {
        sdk.destroy();
        await ddb.stop();
      },
    });
  },
};

async function withHeldLock(backend: Omit<Backend, 'locks' | 'held'>): Promise<Backend> {
  // No background renewal: its requests would be counted against the call under test.
  const locks = new LockClient({ store: backend.store, leaseMs: 10 * 60_000, heartbeatMs: false });
  const held = await locks.acquire('jobs/held');
  return { ...backend, locks, held };
}

for (const name of ['memory', 's3', 'dynamodb'] as const) {
  describe(`bad input is refused before any request (${name} store)`, () => {
    let backend: Backend;
    beforeAll(async () => {
      backend = await backends[name]();
    });
    afterAll(async () => {
      await backend?.stop();
    });

    const cases = [...BAD_CALLS, ...storeOptionCases(name)];
    const named = (bad: BadCall) => [`${bad.entry} with ${bad.value}`, bad] as const;
    test.each(cases.map(named))('%s', async (_, bad) => {
      await expectConfigErrorWithoutRequests(backend, bad);
    });
  });
}
