import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import {
  type AttributeValue,
  DescribeTableCommand,
  DynamoDBClient,
  type DynamoDBClientConfig,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { type DynamoDBLocal, type FaultProxy, faultProxy, startDynamoDBLocal } from '@latch/testing';
import { describeStoreContract, freeRecord, heldRecord } from '@latch/testing/conformance';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as latch from '../../src/index.js';
import {
  dynamoStore,
  ensureLockTable,
  LockClient,
  LockConfigError,
  type LockStore,
  LockStoreError,
} from '../../src/index.js';
import { countRequests } from '../helpers/count-requests.js';
import { listLocks } from '../helpers/list-locks.js';

// One JVM for the whole file: it takes seconds to start, tables take milliseconds.
let ddb: DynamoDBLocal;
let admin: DynamoDBClient;
const clients: DynamoDBClient[] = [];

function client(config: DynamoDBClientConfig = {}): DynamoDBClient {
  const c = new DynamoDBClient({
    endpoint: ddb.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
    ...config,
  });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  ddb = await startDynamoDBLocal();
  admin = client();
  await ensureLockTable(admin, { table: 'locks' });
  await ensureLockTable(admin, { table: 'locks-sk', partitionKey: 'id', sortKey: 'kind' });
});

afterAll(async () => {
  for (const c of clients) c.destroy();
  await ddb?.stop();
});

/** Writes an item by hand: object text becomes attributes, anything else a bad schema attribute. */
function tamperer(table: string, key: (k: string) => Record<string, AttributeValue>) {
  return async (k: string, rawText: string) => {
    let attributes: Record<string, AttributeValue> = { latch: { S: rawText } };
    try {
      const parsed: unknown = JSON.parse(rawText);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
        attributes = {};
        for (const [name, value] of Object.entries(parsed)) {
          if (value === null) continue;
          attributes[name] = typeof value === 'number' ? { N: String(value) } : { S: String(value) };
        }
      }
    } catch {
      // not JSON: keep it as an ill-typed schema attribute
    }
    await admin.send(new PutItemCommand({ TableName: table, Item: { ...attributes, ...key(k) } }));
  };
}

describeStoreContract({
  latch,
  name: 'dynamodb',
  list: true,
  claim: true,
  start: async () => ({
    store: dynamoStore({ client: client(), table: 'locks' }),
    tamper: tamperer('locks', (k) => ({ pk: { S: k } })),
    maxKey: { length: 2048, unit: 'utf8-bytes' },
    conflictsReturnCurrent: true,
  }),
});

describeStoreContract({
  latch,
  name: 'dynamodb with a sort key',
  list: true,
  claim: true,
  start: async () => ({
    store: dynamoStore({
      client: client(),
      table: 'locks-sk',
      partitionKey: 'id',
      sortKey: 'kind',
      sortKeyValue: 'mutex',
    }),
    tamper: tamperer('locks-sk', (k) => ({ id: { S: k }, kind: { S: 'mutex' } })),
    maxKey: { length: 2048, unit: 'utf8-bytes' },
    conflictsReturnCurrent: true,
  }),
});

describe('dynamoStore item layout', () => {
  it('stores flat, typed attributes, and leaves out what is null or undefined', async () => {
    const store = dynamoStore({ client: admin, table: 'locks' });
    const key = `layout/${randomUUID()}`;
    const record = heldRecord(4, { leaseMs: null, expiresAt: null, context: undefined }, { a: 'ü' });
    const written = await store.write(key, record, { absent: true });
    expect(written.ok).toBe(true);
    const { Item } = await admin.send(new GetItemCommand({ TableName: 'locks', Key: { pk: { S: key } } }));
    expect(Item).toEqual({
      pk: { S: key },
      latch: { N: '1' },
      rv: { N: '1' },
      token: { N: '4' },
      writeId: { S: record.writeId },
      owner: { S: record.holder!.owner },
      lockId: { S: record.holder!.lockId },
      acquiredAt: { N: String(record.holder!.acquiredAt) },
      renewedAt: { N: String(record.holder!.renewedAt) },
      data: { S: '{"a":"ü"}' },
    });
  });

  it('stores a holder token with its holder’s lock id, and does not read one left from an earlier holder as the new one’s', async () => {
    const store = dynamoStore({ client: admin, table: 'locks' });
    const key = `layout/${randomUUID()}`;
    const base = heldRecord(1_028);
    const record = { ...base, holder: { ...base.holder!, token: 5 } };
    expect((await store.write(key, record, { absent: true })).ok).toBe(true);
    const { Item } = await admin.send(new GetItemCommand({ TableName: 'locks', Key: { pk: { S: key } } }));
    expect(Item?.holderToken).toEqual({ S: `5 ${record.holder.lockId}` });
    expect((await store.read(key))?.record.holder?.token).toBe(5);
    // An older Latch keeps attributes it does not know when it writes a holder of its own.
    const older = { ...Item!, lockId: { S: 'older-holder' }, token: { N: '1029' }, rv: { N: '2' } };
    await admin.send(new PutItemCommand({ TableName: 'locks', Item: older }));
    const read = await store.read(key);
    expect(read?.record.holder?.lockId).toBe('older-holder');
    expect(read?.record.holder?.token).toBeUndefined();
    await admin.send(
      new PutItemCommand({ TableName: 'locks', Item: { ...older, holderToken: { S: 'five' } } }),
    );
    await expect(store.read(key)).rejects.toBeInstanceOf(latch.LockCorruptedError);
  });

  it('puts the sort key value (default "lock") on every item', async () => {
    const store = dynamoStore({ client: admin, table: 'locks-sk', partitionKey: 'id', sortKey: 'kind' });
    const key = `layout/${randomUUID()}`;
    expect((await store.write(key, freeRecord(1), { absent: true })).ok).toBe(true);
    const { Item } = await admin.send(
      new GetItemCommand({ TableName: 'locks-sk', Key: { id: { S: key }, kind: { S: 'lock' } } }),
    );
    expect(Item?.latch).toEqual({ N: '1' });
  });

  it('sizes records so that the largest one fits in an item with the longest key', async () => {
    const store = dynamoStore({ client: admin, table: 'locks-sk', partitionKey: 'id', sortKey: 'kind' });
    const base = heldRecord(Number.MAX_SAFE_INTEGER, { context: 'c'.repeat(1024) }, '');
    const record = { ...base, data: 'x'.repeat(store.maxRecordBytes - store.recordBytes(base)) };
    expect(store.recordBytes(record)).toBe(store.maxRecordBytes);
    const key = 'k'.repeat(2048);
    expect((await store.write(key, record, { absent: true })).ok).toBe(true);
    expect((await store.read(key))?.record).toEqual(record);

    // Well past DynamoDB's 400 KB item limit: the service refuses, and says so.
    const tooBig = { ...record, data: 'x'.repeat(410_000) };
    const error = await store.write('too-big', tooBig, { absent: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect(error).toMatchObject({ retryable: false, maybeApplied: false });
  });
});

describe('dynamoStore options', () => {
  const names = [
    'latch',
    'rv',
    'token',
    'writeId',
    'owner',
    'lockId',
    'acquiredAt',
    'renewedAt',
    'leaseMs',
    'expiresAt',
  ];

  it('refuses key attribute names that collide with record attributes, before any request', () => {
    const c = client();
    const requests = countRequests(c);
    for (const name of [...names, 'context', 'data']) {
      expect(() => dynamoStore({ client: c, table: 'locks', partitionKey: name })).toThrow(LockConfigError);
      expect(() => dynamoStore({ client: c, table: 'locks', sortKey: name })).toThrow(/record attribute/);
    }
    expect(() => dynamoStore({ client: c, table: 'locks', partitionKey: 'id', sortKey: 'id' })).toThrow(
      /must differ/,
    );
    expect(requests.count).toBe(0);
  });

  it('refuses missing or malformed options', () => {
    const c = client();
    const bad: unknown[] = [
      undefined,
      {},
      { client: {}, table: 'locks' },
      { client: c },
      { client: c, table: '' },
      { client: c, table: 'locks', partitionKey: '' },
      { client: c, table: 'locks', sortKeyValue: 'x' },
      { client: c, table: 'locks', sortKey: 'sk', sortKeyValue: '' },
    ];
    bad.forEach((options, i) => {
      expect(() => dynamoStore(options as never), `case ${i}`).toThrow(LockConfigError);
    });
  });

  it('refuses a key over 2048 bytes before sending it', async () => {
    const c = client();
    const requests = countRequests(c);
    const store = dynamoStore({ client: c, table: 'locks' });
    expect(() => store.checkKey('é'.repeat(1025))).toThrow(/2050 bytes.*2048/);
    expect(requests.count).toBe(0);
  });
});

describe('dynamoStore errors', () => {
  it('names the missing table and how to create it, and does not retry', async () => {
    const store = dynamoStore({ client: client(), table: 'no-such-table' });
    const operations: (() => Promise<unknown>)[] = [
      () => store.read('k'),
      () => store.write('k', freeRecord(1), { absent: true }),
      () => store.delete('k', '1:w'),
      () => store.claim!('k', { record: heldRecord(0), expiredBefore: 0 }),
    ];
    for (const operation of operations) {
      const error = await operation().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockStoreError);
      expect(error).toMatchObject({ retryable: false, maybeApplied: false, reason: 'misconfigured' });
      expect((error as Error).message).toContain('"no-such-table"');
      expect((error as Error).message).toContain('ensureLockTable');
      expect((error as Error).cause).toMatchObject({ name: 'ResourceNotFoundException' });
    }
  });

  it('reports a refused connection as retryable and not applied', async () => {
    const port = await closedPort();
    const store = dynamoStore({
      client: client({ endpoint: `http://127.0.0.1:${port}`, maxAttempts: 1 }),
      table: 'locks',
    });
    const error = await store.write('k', freeRecord(1), { absent: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect(error).toMatchObject({ retryable: true, maybeApplied: false, reason: 'unavailable' });
  });

  it('reports a table whose key schema does not match as misconfigured, not retried', async () => {
    const store = dynamoStore({ client: client(), table: 'locks', partitionKey: 'id' });
    const error = await store.read('k').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect(error).toMatchObject({ retryable: false, reason: 'misconfigured' });
    expect((error as Error).cause).toMatchObject({ name: 'ValidationException' });
  });

  it.each([
    // [what the table has, the store's options, what the message must say the store expects]
    ['partition key "id" and sort key "kind"', 'locks-sk', {}, 'a string partition key "pk" and no sort key'],
    ['partition key "pk"', 'locks', { partitionKey: 'id' }, 'a string partition key "id" and no sort key'],
    [
      'partition key "pk", no sort key',
      'locks',
      { sortKey: 'kind' },
      'a string partition key "pk" and a string sort key "kind"',
    ],
    [
      'partition key "id" and sort key "kind"',
      'locks-sk',
      { partitionKey: 'id', sortKey: 'other' },
      'a string partition key "id" and a string sort key "other"',
    ],
  ])(
    'a table with %s, used with other key names, gets an error naming the key the store expects',
    async (_, table, keys, expected) => {
      const store = dynamoStore({ client: client(), table, ...keys });
      const locks = new LockClient({ store });
      try {
        for (const call of [() => locks.tryAcquire('k'), () => locks.inspect('k')]) {
          const error = await call().catch((e: unknown) => e);
          expect(error).toBeInstanceOf(LockStoreError);
          expect(error).toMatchObject({
            code: 'LOCK_STORE_CONFIG',
            reason: 'misconfigured',
            maybeApplied: false,
          });
          expect((error as Error).message).toContain(
            `the key schema of DynamoDB table "${table}" is not the one the store uses, which expects ${expected}.`,
          );
          expect((error as Error).message).toContain('dynamoStore({ partitionKey, sortKey })');
        }
      } finally {
        await locks.close();
      }
    },
  );

  it('reports credentials the service refuses as denied, not retried, without the secret', async () => {
    // DynamoDB Local accepts any key made of letters and digits, and refuses any other.
    const secretAccessKey = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    const store = dynamoStore({
      client: client({ credentials: { accessKeyId: 'not-a-key!', secretAccessKey }, maxAttempts: 1 }),
      table: 'locks',
    });
    const error = await store.read('k').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect(error).toMatchObject({ retryable: false, reason: 'denied', code: 'LOCK_STORE_ACCESS_DENIED' });
    expect((error as Error).message).not.toContain(secretAccessKey);
  });

  describe('when a response is lost after the write was applied', () => {
    let proxy: FaultProxy;
    beforeAll(async () => {
      proxy = await faultProxy({ target: ddb.endpoint });
    });
    afterEach(() => proxy.clear());
    afterAll(() => proxy?.close());

    /** A store whose client goes through the proxy; with `healOnRetry`, only the first attempt loses its response. */
    const storeThroughProxy = (config: DynamoDBClientConfig, healOnRetry = false): LockStore => {
      const c = client({ endpoint: proxy.endpoint, ...config });
      if (healOnRetry) {
        let attempts = 0;
        c.middlewareStack.add(
          (next) => async (args) => {
            if (++attempts > 1) proxy.dropResponses(false);
            return next(args);
          },
          { step: 'deserialize', name: 'healProxyOnRetry' },
        );
      }
      return dynamoStore({ client: c, table: 'locks' });
    };
    const direct = () => dynamoStore({ client: admin, table: 'locks' });

    it('without SDK retries, a write throws maybeApplied and was in fact applied', async () => {
      const store = storeThroughProxy({ maxAttempts: 1 });
      const key = `lost/${randomUUID()}`;
      const record = heldRecord(1);
      proxy.dropResponses(true);
      const error = await store.write(key, record, { absent: true }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockStoreError);
      expect(error).toMatchObject({ retryable: true, maybeApplied: true });
      expect((await direct().read(key))?.record).toEqual(record);
    });

    it('a read that loses its response is retryable and never "applied"', async () => {
      const store = storeThroughProxy({ maxAttempts: 1 });
      proxy.dropResponses(true);
      const error = await store.read('anything').catch((e: unknown) => e);
      expect(error).toMatchObject({ retryable: true, maybeApplied: false });
    });

    it('with SDK retries, a create conflicts with itself and says it may be ours', async () => {
      const store = storeThroughProxy({}, true);
      const key = `lost/${randomUUID()}`;
      const record = heldRecord(1);
      proxy.dropResponses(true);
      const outcome = await store.write(key, record, { absent: true });
      expect(outcome).toMatchObject({ ok: false, maybeApplied: true });
      expect(outcome.ok === false && outcome.current?.record).toEqual(record);
    });

    it('with SDK retries, a claim finds its own lease and says it may be ours', async () => {
      const key = `lost/${randomUUID()}`;
      await direct().write(key, freeRecord(6), { absent: true });
      const store = storeThroughProxy({}, true);
      const record = heldRecord(0);
      proxy.dropResponses(true);
      const outcome = await store.claim!(key, { record, expiredBefore: 0 });
      expect(outcome).toMatchObject({ ok: false, maybeApplied: true });
      expect(outcome.ok === false && outcome.current?.record).toEqual({ ...record, token: 7 });
    });

    it('with SDK retries, a delete finds nothing and says it may have been ours', async () => {
      const key = `lost/${randomUUID()}`;
      const written = await direct().write(key, freeRecord(1), { absent: true });
      if (!written.ok) throw new Error('setup write failed');
      const store = storeThroughProxy({}, true);
      proxy.dropResponses(true);
      expect(await store.delete(key, written.version)).toEqual({
        ok: false,
        current: null,
        maybeApplied: true,
      });
      expect(await direct().read(key)).toBeNull();
    });
  });
});

describe('dynamoStore list', () => {
  it('follows LastEvaluatedKey across Scan pages of 1 MB: 5 records of 300 KB take at least two', async () => {
    await ensureLockTable(admin, { table: 'list-pages' });
    const c = client();
    const counter = countRequests(c);
    const store = dynamoStore({ client: c, table: 'list-pages' });
    const keys = ['big/1', 'big/2', 'big/3', 'big/4', 'big/5'];
    for (const [i, key] of keys.entries()) {
      const record = freeRecord(i + 1, { blob: String(i).repeat(300_000) });
      expect((await store.write(key, record, { absent: true })).ok).toBe(true);
    }
    counter.reset();
    const { found } = await listLocks(store, 'big/');
    expect(found.map((info) => info.key).sort()).toEqual(keys);
    for (const info of found) {
      expect(info.data).toEqual({ blob: String(info.fencingToken - 1).repeat(300_000) });
    }
    // Records come with the Scan: no GetItem, and at least one Scan more than a single page.
    expect(counter.byCommand.get('GetItemCommand')).toBeUndefined();
    expect(counter.byCommand.get('ScanCommand')).toBeGreaterThanOrEqual(2);
  });

  it('lists only lock items whose key starts with the prefix: not items with another sort key value', async () => {
    const store = dynamoStore({ client: admin, table: 'locks-sk', partitionKey: 'id', sortKey: 'kind' });
    const base = `list/${randomUUID()}`;
    for (const key of [`${base}/a`, `${base}/b`, `${base}-other`]) {
      expect((await store.write(key, freeRecord(3), { absent: true })).ok).toBe(true);
    }
    // Something else kept in the same table, under the same partition key as a lock.
    await admin.send(
      new PutItemCommand({ TableName: 'locks-sk', Item: { id: { S: `${base}/a` }, kind: { S: 'audit' } } }),
    );
    const { found, unreadable } = await listLocks(store, `${base}/`);
    expect(found.map((info) => [info.key, info.fencingToken]).sort()).toEqual([
      [`${base}/a`, 3],
      [`${base}/b`, 3],
    ]);
    expect(unreadable).toEqual([]);
  });

  it('reports an item it cannot read as unreadable, from the Scan alone', async () => {
    const c = client();
    const counter = countRequests(c);
    const store = dynamoStore({ client: c, table: 'locks' });
    const base = `list/${randomUUID()}`;
    expect((await store.write(`${base}/good`, freeRecord(1), { absent: true })).ok).toBe(true);
    await admin.send(
      new PutItemCommand({ TableName: 'locks', Item: { pk: { S: `${base}/bad` }, latch: { N: '1' } } }),
    );
    counter.reset();
    const { found, unreadable } = await listLocks(store, `${base}/`);
    expect(found.map((info) => info.key)).toEqual([`${base}/good`]);
    expect(unreadable.map((event) => event.key)).toEqual([`${base}/bad`]);
    expect(counter.byCommand.get('GetItemCommand')).toBeUndefined();
  });
});

describe('ensureLockTable', () => {
  it('creates an on-demand table with string keys, and accepts it when it exists', async () => {
    await ensureLockTable(admin, { table: 'fresh', partitionKey: 'lockKey' });
    await ensureLockTable(admin, { table: 'fresh', partitionKey: 'lockKey' });
    const { Table } = await admin.send(new DescribeTableCommand({ TableName: 'fresh' }));
    expect(Table?.TableStatus).toBe('ACTIVE');
    expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    expect(Table?.KeySchema).toEqual([{ AttributeName: 'lockKey', KeyType: 'HASH' }]);
    expect(Table?.AttributeDefinitions).toEqual([{ AttributeName: 'lockKey', AttributeType: 'S' }]);
  });

  it('refuses an existing table whose keys differ', async () => {
    await expect(ensureLockTable(admin, { table: 'locks', partitionKey: 'id' })).rejects.toThrow(
      /exists with key pk \(HASH\).*expects id \(HASH\)/,
    );
    await expect(ensureLockTable(admin, { table: 'locks', sortKey: 'sk' })).rejects.toBeInstanceOf(
      LockConfigError,
    );
  });

  it('refuses bad options before any request', async () => {
    const c = client();
    const requests = countRequests(c);
    await expect(ensureLockTable(c, { table: '' })).rejects.toBeInstanceOf(LockConfigError);
    await expect(ensureLockTable(c, { table: 't', partitionKey: 'rv' })).rejects.toBeInstanceOf(
      LockConfigError,
    );
    await expect(
      ensureLockTable(c, { table: 't', billingMode: 'PROVISIONED' as never }),
    ).rejects.toBeInstanceOf(LockConfigError);
    expect(requests.count).toBe(0);
  });
});

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
