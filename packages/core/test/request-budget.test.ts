import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { type DynamoDBLocal, type S3Server, startDynamoDBLocal, startS3Server } from '@latch/testing';
import { freeRecord } from '@latch/testing/conformance';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { dynamoStore, ensureLockTable, LockClient, s3ListStore, s3Store } from '../src/index.js';
import { countRequests, type RequestCounter } from './helpers/count-requests.js';

// Deterministic request counts (not timings): each operation's cost in store requests.
// Heartbeats are off so that only the operation under test sends requests.

let seq = 0;
const freshKey = () => `budget/${Date.now().toString(36)}-${++seq}`;

describe('request budget on DynamoDB', () => {
  let ddb: DynamoDBLocal;
  let sdk: DynamoDBClient;
  let counter: RequestCounter;
  const client = () =>
    new LockClient({
      store: dynamoStore({ client: sdk, table: 'locks', verify: false }),
      heartbeatMs: false,
    });

  beforeAll(async () => {
    ddb = await startDynamoDBLocal();
    sdk = new DynamoDBClient({
      endpoint: ddb.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
    });
    await ensureLockTable(sdk, { table: 'locks' });
    counter = countRequests(sdk);
  });
  afterAll(async () => {
    sdk?.destroy();
    await ddb?.stop();
  });

  test('acquire 1, renew 1, update 1, release 1, re-acquire by another client 1', async () => {
    const key = freshKey();
    const a = client();
    const b = client();
    counter.reset();
    const lock = await a.acquire(key);
    expect(counter.byCommand).toEqual(new Map([['UpdateItemCommand', 1]]));
    counter.reset();
    await lock.extend(60_000);
    expect(counter.count).toBe(1);
    counter.reset();
    await lock.update({ n: 1 });
    expect(counter.count).toBe(1);
    counter.reset();
    await lock.release();
    expect(counter.count).toBe(1);
    counter.reset();
    const again = await b.acquire(key);
    expect(counter.count).toBe(1);
    expect(again.data).toEqual({ n: 1 });
    await again.release();
  });

  test('a failed tryAcquire costs 1 request', async () => {
    const key = freshKey();
    const holder = await client().acquire(key);
    counter.reset();
    expect(await client().tryAcquire(key)).toBeNull();
    expect(counter.count).toBe(1);
    await holder.release();
  });

  test('list: 1 Scan per page of 1 MB read (the records come with it), whatever the prefix', async () => {
    const base = freshKey();
    const a = client();
    for (let i = 0; i < 20; i++) await (await a.acquire(`${base}/${i}`)).release();
    counter.reset();
    let listed = 0;
    for await (const _ of client().list(`${base}/`)) listed++;
    expect(listed).toBe(20);
    // The table is far under 1 MB: one page.
    expect(counter.byCommand).toEqual(new Map([['ScanCommand', 1]]));
  });
});

describe('request budget on S3', () => {
  let server: S3Server;
  let sdk: S3Client;
  let counter: RequestCounter;
  // verify: false — the budgets are the lock's; the check on first use costs its own, counted in verify-store.test.ts.
  const client = () =>
    new LockClient({ store: s3Store({ client: sdk, bucket: 'locks', verify: false }), heartbeatMs: false });

  beforeAll(async () => {
    server = await startS3Server({ bucket: 'locks' });
    sdk = new S3Client(server.clientConfig());
    counter = countRequests(sdk);
  });
  afterAll(async () => {
    sdk?.destroy();
    await server?.stop();
  });

  test('absent key: acquire 1 (create), renew 1, release 1; same client again: 1 (known ETag)', async () => {
    const key = freshKey();
    const a = client();
    counter.reset();
    const lock = await a.acquire(key);
    expect(counter.byCommand).toEqual(new Map([['PutObjectCommand', 1]]));
    counter.reset();
    await lock.extend(60_000);
    expect(counter.count).toBe(1);
    counter.reset();
    await lock.release();
    expect(counter.count).toBe(1);
    counter.reset();
    const again = await a.acquire(key);
    expect(counter.byCommand).toEqual(new Map([['PutObjectCommand', 1]]));
    expect(again.fencingToken).toBe(lock.fencingToken + 1);
    await again.release();
  });

  test('existing key whose ETag the client does not know: 2 (read, then replace)', async () => {
    const key = freshKey();
    const a = client();
    const b = client();
    await (await a.acquire(key)).release();
    await b.inspect(key); // b has seen the key before, but a wrote it last
    await (await a.acquire(key)).release();
    counter.reset();
    const lock = await b.acquire(key);
    expect(counter.byCommand).toEqual(
      new Map([
        ['GetObjectCommand', 1],
        ['PutObjectCommand', 1],
      ]),
    );
    await lock.release();
  });

  test('a client that never saw an existing key pays one refused create the first time only', async () => {
    const key = freshKey();
    await (await client().acquire(key)).release();
    const fresh = client();
    counter.reset();
    const lock = await fresh.acquire(key);
    expect(counter.byCommand).toEqual(
      new Map([
        ['PutObjectCommand', 2],
        ['GetObjectCommand', 1],
      ]),
    );
    await lock.release();
  });

  test('a failed tryAcquire sends at most 1 GET (and no write when the key is known)', async () => {
    const key = freshKey();
    const holder = await client().acquire(key);
    const watcher = client();
    await watcher.inspect(key);
    counter.reset();
    expect(await watcher.tryAcquire(key)).toBeNull();
    expect(counter.byCommand).toEqual(new Map([['GetObjectCommand', 1]]));
    const stranger = client();
    counter.reset();
    expect(await stranger.tryAcquire(key)).toBeNull();
    expect(counter.byCommand.get('GetObjectCommand')).toBe(1);
    expect(counter.count).toBeLessThanOrEqual(2);
    await holder.release();
  });

  test('list: 1 ListObjectsV2 per 1,000 keys and 1 GetObject per lock, at most 8 GetObjects at once', async () => {
    const base = freshKey();
    const store = s3Store({ client: sdk, bucket: 'locks' });
    const keys = Array.from({ length: 1001 }, (_, i) => `${base}/${i}`);
    for (let i = 0; i < keys.length; i += 50) {
      await Promise.all(
        keys.slice(i, i + 50).map((key) => store.write(key, freeRecord(1), { absent: true })),
      );
    }
    const reads = inFlight(sdk, 'GetObjectCommand');
    counter.reset();
    let listed = 0;
    for await (const _ of client().list(`${base}/`)) listed++;
    expect(listed).toBe(1001);
    expect(counter.byCommand).toEqual(
      new Map([
        ['ListObjectsV2Command', 2],
        ['GetObjectCommand', 1001],
      ]),
    );
    expect(reads.most).toBe(8);
  }, 60_000);

  test('local waiters share one poller; the lock is handed over with one write, then passed on with none', async () => {
    const key = freshKey();
    const a = client();
    const lock = await a.acquire(key);
    const waiting = [a.acquire(key, { waitMs: 10_000 }), a.acquire(key, { waitMs: 10_000 })];
    await new Promise((resolve) => setTimeout(resolve, 300));
    // While the lock is held in this client, its waiters do not poll the store at all.
    counter.reset();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(counter.count).toBe(0);
    await lock.release();
    expect(counter.byCommand).toEqual(new Map([['PutObjectCommand', 1]]));
    const next = await waiting[0]!;
    expect(next.fencingToken).toBe(lock.fencingToken + 1);
    // The hand-over reserved tokens above the waiter's: the next local caller takes one, and
    // the store hears nothing until the lease's next write.
    counter.reset();
    await next.release();
    const last = await waiting[1]!;
    expect(counter.count).toBe(0);
    expect(last.fencingToken).toBe(next.fencingToken + 1);
    await last.release();
    expect(counter.byCommand).toEqual(new Map([['PutObjectCommand', 1]]));
    // Anyone acquiring next starts above every reserved token.
    const after = await client().acquire(key);
    expect(after.fencingToken).toBeGreaterThan(last.fencingToken + 1);
    await after.release();
  });
});

describe('request budget of the S3 list strategy (no conditional writes)', () => {
  let server: S3Server;
  let sdk: S3Client;
  let counter: RequestCounter;
  const client = () =>
    new LockClient({
      // A generous settle time: an upload slower than it would be withdrawn and retried, changing the counts.
      store: s3ListStore({ client: sdk, bucket: 'locks', settleMs: 1000 }),
      heartbeatMs: false,
    });

  beforeAll(async () => {
    server = await startS3Server({ bucket: 'locks', conditionalWrites: false });
    sdk = new S3Client(server.clientConfig());
    counter = countRequests(sdk);
  });
  afterAll(async () => {
    sdk?.destroy();
    await server?.stop();
  });

  test('acquire 2 (put, list), renew 3 (put, list, delete), release 2 (list, delete)', async () => {
    const key = freshKey();
    const a = client();
    counter.reset();
    const lock = await a.acquire(key);
    expect(counter.byCommand).toEqual(
      new Map([
        ['PutObjectCommand', 1],
        ['ListObjectsV2Command', 1],
      ]),
    );
    counter.reset();
    await lock.extend(60_000);
    expect(counter.byCommand).toEqual(
      new Map([
        ['PutObjectCommand', 1],
        ['ListObjectsV2Command', 1],
        ['DeleteObjectCommand', 1],
      ]),
    );
    counter.reset();
    await lock.release();
    expect(counter.byCommand).toEqual(
      new Map([
        ['ListObjectsV2Command', 1],
        ['DeleteObjectCommand', 1],
      ]),
    );
  });

  test("a failed tryAcquire costs 4 the first time (the holder's context is read once), 3 after", async () => {
    const key = freshKey();
    const holder = await client().acquire(key);
    const waiter = client();
    counter.reset();
    expect(await waiter.tryAcquire(key)).toBeNull();
    expect(counter.byCommand).toEqual(
      new Map([
        ['PutObjectCommand', 1],
        ['ListObjectsV2Command', 1],
        ['GetObjectCommand', 1],
        ['DeleteObjectCommand', 1],
      ]),
    );
    counter.reset();
    expect(await waiter.tryAcquire(key)).toBeNull();
    expect(counter.byCommand).toEqual(
      new Map([
        ['PutObjectCommand', 1],
        ['ListObjectsV2Command', 1],
        ['DeleteObjectCommand', 1],
      ]),
    );
    counter.reset();
    expect((await waiter.inspect(key)).state).toBe('held');
    expect(counter.byCommand).toEqual(new Map([['ListObjectsV2Command', 1]]));
    await holder.release();
  });
});

/** The most requests of one command the client had in flight at once, from now on. */
function inFlight(client: S3Client, command: string): { readonly most: number } {
  const seen = { now: 0, most: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== command) return next(args);
      seen.most = Math.max(seen.most, ++seen.now);
      try {
        return await next(args);
      } finally {
        seen.now--;
      }
    },
    { step: 'deserialize', name: `latchTestInFlight${command}`, priority: 'low' },
  );
  return seen;
}

describe('request budget of a semaphore (limit 3)', () => {
  let ddb: DynamoDBLocal;
  let server: S3Server;
  let dynamoSdk: DynamoDBClient;
  let s3Sdk: S3Client;
  const counters: Record<string, RequestCounter> = {};
  const stores = {
    dynamodb: () => dynamoStore({ client: dynamoSdk, table: 'locks', verify: false }),
    s3: () => s3Store({ client: s3Sdk, bucket: 'locks', verify: false }),
  };

  beforeAll(async () => {
    [ddb, server] = await Promise.all([startDynamoDBLocal(), startS3Server({ bucket: 'locks' })]);
    dynamoSdk = new DynamoDBClient({
      endpoint: ddb.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
    });
    await ensureLockTable(dynamoSdk, { table: 'locks' });
    s3Sdk = new S3Client(server.clientConfig());
    counters.dynamodb = countRequests(dynamoSdk);
    counters.s3 = countRequests(s3Sdk);
  });
  afterAll(async () => {
    dynamoSdk?.destroy();
    s3Sdk?.destroy();
    await Promise.all([ddb?.stop(), server?.stop()]);
  });

  test.each(['dynamodb', 's3'] as const)(
    '%s: uncontended acquire 1 and release 1, as for a lock; a second holder beside the first: 1 more',
    async (kind) => {
      const counter = counters[kind]!;
      const key = freshKey();
      const a = new LockClient({ store: stores[kind](), heartbeatMs: false });
      counter.reset();
      const first = await a.acquire(key, { limit: 3 });
      expect(counter.count).toBe(1);
      counter.reset();
      const second = await a.acquire(key, { limit: 3 });
      expect(counter.count).toBe(1); // this client wrote the record last: no read
      counter.reset();
      await first.release();
      expect(counter.count).toBe(1);
      counter.reset();
      await second.release();
      expect(counter.count).toBe(1);
      counter.reset();
      const again = await a.acquire(key, { limit: 3 });
      expect(counter.count).toBe(1);
      expect(again.fencingToken).toBe(3);
      await again.release();
    },
  );

  test.each(['dynamodb', 's3'] as const)(
    '%s: a renewal whose record another holder wrote since costs one read and one more write',
    async (kind) => {
      const counter = counters[kind]!;
      const key = freshKey();
      const a = new LockClient({ store: stores[kind](), heartbeatMs: false });
      const b = new LockClient({ store: stores[kind](), heartbeatMs: false });
      const mine = await a.acquire(key, { limit: 3 });
      const theirs = await b.acquire(key, { limit: 3 });
      counter.reset();
      await mine.extend(60_000);
      // DynamoDB returns the record with the failed condition; S3 needs a read.
      expect(counter.count).toBe(kind === 'dynamodb' ? 2 : 3);
      expect(mine.isHeld && theirs.isHeld).toBe(true);
      await Promise.all([mine.release(), theirs.release()]);
    },
  );
});
