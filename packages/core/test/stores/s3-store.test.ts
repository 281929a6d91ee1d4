import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { HeadObjectCommand, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { type S3Server, startS3Server } from '@latch/testing';
import { describeStoreContract, freeRecord, heldRecord } from '@latch/testing/conformance';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as latch from '../../src/index.js';
import { LockConfigError, type LockStore, LockStoreError, memoryStore, s3Store } from '../../src/index.js';
import { countRequests } from '../helpers/count-requests.js';
import { listLocks } from '../helpers/list-locks.js';

const BUCKET = 'latch-locks';
const PREFIX = 'locks/';

let server: S3Server;
const clients: S3Client[] = [];

function client(config: S3ClientConfig = {}): S3Client {
  const c = new S3Client({
    endpoint: server.endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
    ...config,
  });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  server = await startS3Server({ bucket: BUCKET });
});

afterEach(() => server.faults.clear());

afterAll(async () => {
  for (const c of clients) c.destroy();
  await server?.stop();
});

describeStoreContract({
  latch,
  name: 's3',
  list: true,
  start: async () => {
    const c = client();
    return {
      store: s3Store({ client: c, bucket: BUCKET, prefix: PREFIX }),
      async tamper(key, rawText) {
        await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: PREFIX + key, Body: rawText }));
      },
      maxKey: { length: 1024 - PREFIX.length, unit: 'utf8-bytes' },
    };
  },
});

const direct = () => s3Store({ client: client(), bucket: BUCKET, prefix: PREFIX });
const freshKey = () => `s3/${randomUUID()}`;

describe('s3Store objects', () => {
  it('uses the ETag, quotes included, as the version', async () => {
    const c = client();
    const store = s3Store({ client: c, bucket: BUCKET, prefix: PREFIX });
    const key = freshKey();
    const written = await store.write(key, freeRecord(1), { absent: true });
    const head = await c.send(new HeadObjectCommand({ Bucket: BUCKET, Key: PREFIX + key }));
    expect(written).toEqual({ ok: true, version: head.ETag });
    expect(head.ETag).toMatch(/^".+"$/);
    expect(head.ContentType).toBe('application/json');
    expect((await store.read(key))?.version).toBe(head.ETag);
  });

  it('counts the prefix in the key limit', () => {
    const store = s3Store({ client: client(), bucket: BUCKET, prefix: 'p'.repeat(1000) });
    store.checkKey('k'.repeat(24));
    expect(() => store.checkKey('k'.repeat(25))).toThrow(/1025 bytes.*"p{3}/);
  });

  it('sizes a record as its UTF-8 JSON', () => {
    const store = direct();
    const record = heldRecord(1, {}, 'ü');
    expect(store.recordBytes(record)).toBe(Buffer.byteLength(JSON.stringify({ latch: 1, ...record })));
    expect(store.maxRecordBytes).toBe(256 * 1024);
  });

  it('refuses missing or malformed options before any request', () => {
    const c = client();
    const requests = countRequests(c);
    const bad: unknown[] = [
      undefined,
      { bucket: BUCKET },
      { client: {}, bucket: BUCKET },
      { client: c },
      { client: c, bucket: '' },
      { client: c, bucket: BUCKET, prefix: 7 },
      { client: c, bucket: BUCKET, prefix: 'p'.repeat(1024) },
      { client: c, bucket: BUCKET, maxRecordBytes: 0 },
      { client: c, bucket: BUCKET, maxRecordBytes: 1.5e3 + 0.5 },
      { client: c, bucket: BUCKET, maxRecordBytes: Number.POSITIVE_INFINITY },
    ];
    bad.forEach((options, i) => {
      expect(() => s3Store(options as never), `case ${i}`).toThrow(LockConfigError);
    });
    expect(s3Store({ client: c, bucket: BUCKET, maxRecordBytes: 4096 }).maxRecordBytes).toBe(4096);
    expect(requests.count).toBe(0);
  });

  it.each([
    ['arn:aws:s3:::my-locks', 's3Store({ bucket: "my-locks" })', 'an ARN'],
    ['arn:aws-cn:s3:::my-locks', 's3Store({ bucket: "my-locks" })', 'an ARN'],
    ['arn:aws:s3:::my-locks/locks', 's3Store({ bucket: "my-locks", prefix: "locks/" })', 'an ARN'],
    ['s3://my-locks', 's3Store({ bucket: "my-locks" })', 'a URL'],
    ['s3://my-locks/locks/', 's3Store({ bucket: "my-locks", prefix: "locks/" })', 'a URL'],
  ])('refuses the bucket %s, and says to pass %s', (bucket, instead, kind) => {
    const c = client();
    const requests = countRequests(c);
    expect(() => s3Store({ client: c, bucket })).toThrow(LockConfigError);
    expect(() => s3Store({ client: c, bucket })).toThrow(
      `s3Store \`bucket\` must be the bucket's name, not ${kind}: got ${JSON.stringify(bucket)}. Pass ${instead}.`,
    );
    expect(requests.count).toBe(0);
  });

  it('takes an access point ARN, which the SDK accepts as a bucket', () => {
    const arn = 'arn:aws:s3:us-east-1:123456789012:accesspoint/locks';
    expect(s3Store({ client: client(), bucket: arn }).kind).toBe('s3');
  });
});

describe('s3Store errors', () => {
  it('names the missing bucket and does not retry', async () => {
    const c = client();
    const requests = countRequests(c);
    const store = s3Store({ client: c, bucket: 'no-such-bucket', prefix: PREFIX });
    const operations: (() => Promise<unknown>)[] = [
      () => store.read('k'),
      () => store.write('k', freeRecord(1), { absent: true }),
      () => store.write('k', freeRecord(1), { version: '"abc"' }),
      () => store.delete('k', '"abc"'),
    ];
    for (const operation of operations) {
      const error = await operation().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockStoreError);
      expect(error).toMatchObject({
        retryable: false,
        maybeApplied: false,
        code: 'LOCK_STORE_NOT_FOUND',
        reason: 'misconfigured',
      });
      expect((error as Error).message).toContain('S3 bucket "no-such-bucket"');
      expect((error as Error).cause).toMatchObject({ name: 'NoSuchBucket' });
    }
    expect(requests.count).toBe(operations.length);
  });

  it('reports SlowDown as retryable and not applied', async () => {
    const store = s3Store({ client: client({ maxAttempts: 1 }), bucket: BUCKET, prefix: PREFIX });
    const key = freshKey();
    server.faults.slowDown({ op: 'PutObject', times: 1 });
    const error = await store.write(key, freeRecord(1), { absent: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect(error).toMatchObject({
      retryable: true,
      maybeApplied: false,
      code: 'LOCK_STORE_THROTTLED',
      reason: 'throttled',
    });
    await expect(direct().read(key)).resolves.toBeNull();
  });

  it('reports a 500 on a write as retryable and possibly applied, and on a read as not applied', async () => {
    const store = s3Store({ client: client({ maxAttempts: 1 }), bucket: BUCKET, prefix: PREFIX });
    server.faults.internalError({ op: ['PutObject', 'GetObject'], times: 2 });
    const write = await store.write(freshKey(), freeRecord(1), { absent: true }).catch((e: unknown) => e);
    expect(write).toMatchObject({ retryable: true, maybeApplied: true, reason: 'unavailable' });
    const read = await store.read(freshKey()).catch((e: unknown) => e);
    expect(read).toMatchObject({ retryable: true, maybeApplied: false, reason: 'unavailable' });
  });

  it('reports a connection reset on a read as retryable and not applied', async () => {
    const store = s3Store({ client: client({ maxAttempts: 1 }), bucket: BUCKET, prefix: PREFIX });
    server.faults.resetBeforeApply({ op: 'GetObject', times: 1 });
    const error = await store.read(freshKey()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect(error).toMatchObject({ retryable: true, maybeApplied: false, code: 'LOCK_STORE_NETWORK' });
  });

  it('reports a refused connection as retryable and not applied', async () => {
    const port = await closedPort();
    const c = client({ endpoint: `http://127.0.0.1:${port}`, maxAttempts: 1 });
    const error = await s3Store({ client: c, bucket: BUCKET })
      .write('k', freeRecord(1), { absent: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockStoreError);
    expect(error).toMatchObject({ retryable: true, maybeApplied: false, reason: 'unavailable' });
  });

  describe('when the response to an applied write is lost', () => {
    it('without SDK retries, the write throws maybeApplied and was in fact applied', async () => {
      const store = s3Store({ client: client({ maxAttempts: 1 }), bucket: BUCKET, prefix: PREFIX });
      const key = freshKey();
      const record = heldRecord(1);
      server.faults.dropResponseAfterApply({ op: 'PutObject', key: PREFIX + key, times: 1 });
      const error = await store.write(key, record, { absent: true }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockStoreError);
      expect(error).toMatchObject({ retryable: true, maybeApplied: true });
      expect((await direct().read(key))?.record).toEqual(record);
    });

    it('with SDK retries, a create conflicts with itself and says it may be ours', async () => {
      const c = client();
      const requests = countRequests(c);
      const store = s3Store({ client: c, bucket: BUCKET, prefix: PREFIX });
      const key = freshKey();
      const record = heldRecord(1);
      server.faults.dropResponseAfterApply({ op: 'PutObject', key: PREFIX + key, times: 1 });
      expect(await store.write(key, record, { absent: true })).toEqual({ ok: false, maybeApplied: true });
      expect((await direct().read(key))?.record).toEqual(record);
      expect(requests.byCommand.get('PutObjectCommand')).toBe(2);
    });

    it('with SDK retries, a replace conflicts with itself and says it may be ours', async () => {
      const store = s3Store({ client: client(), bucket: BUCKET, prefix: PREFIX });
      const key = freshKey();
      const created = await direct().write(key, freeRecord(1), { absent: true });
      if (!created.ok) throw new Error('setup write failed');
      const record = heldRecord(1);
      server.faults.dropResponseAfterApply({ op: 'PutObject', key: PREFIX + key, times: 1 });
      expect(await store.write(key, record, { version: created.version })).toEqual({
        ok: false,
        maybeApplied: true,
      });
      expect((await direct().read(key))?.record).toEqual(record);
    });

    it('with SDK retries, a delete finds nothing and says it may have been ours', async () => {
      const store = s3Store({ client: client(), bucket: BUCKET, prefix: PREFIX });
      const key = freshKey();
      const created = await direct().write(key, freeRecord(1), { absent: true });
      if (!created.ok) throw new Error('setup write failed');
      server.faults.dropResponseAfterApply({ op: 'DeleteObject', key: PREFIX + key, times: 1 });
      expect(await store.delete(key, created.version)).toEqual({
        ok: false,
        current: null,
        maybeApplied: true,
      });
      await expect(direct().read(key)).resolves.toBeNull();
    });
  });
});

describe('s3Store list', () => {
  it("lists only objects under the store's prefix, by key: not the prefix object itself, nor another prefix's", async () => {
    const c = client();
    const base = `list/${randomUUID()}`;
    const store = s3Store({ client: c, bucket: BUCKET, prefix: `${base}/locks/` });
    for (const key of ['a', 'b/c'])
      expect((await store.write(key, freeRecord(2), { absent: true })).ok).toBe(true);
    // A "folder" object, and locks of another store whose prefix starts with this one's.
    await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${base}/locks/`, Body: '' }));
    const other = s3Store({ client: c, bucket: BUCKET, prefix: `${base}/locks-2/` });
    expect((await other.write('a', freeRecord(1), { absent: true })).ok).toBe(true);

    const { found, unreadable } = await listLocks(store, '');
    expect(found.map((info) => [info.key, info.fencingToken])).toEqual([
      ['a', 2],
      ['b/c', 2],
    ]);
    expect(unreadable).toEqual([]);
    expect((await listLocks(store, 'b/')).found.map((info) => info.key)).toEqual(['b/c']);
  });

  it('reports an object that is not a lock record as unreadable, and one too large for a record without reading it', async () => {
    const c = client();
    const counter = countRequests(c);
    const base = `list/${randomUUID()}/`;
    const store = s3Store({ client: c, bucket: BUCKET, prefix: base, maxRecordBytes: 1024 });
    expect((await store.write('lock', freeRecord(1), { absent: true })).ok).toBe(true);
    await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${base}notes.txt`, Body: 'not a lock' }));
    await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${base}backup.tar`, Body: 'x'.repeat(5000) }));
    counter.reset();
    const { found, unreadable } = await listLocks(store, '');
    expect(found.map((info) => info.key)).toEqual(['lock']);
    expect(unreadable.map((event) => [event.key, event.error.reason])).toEqual([
      ['backup.tar', 'the object is 5000 bytes, larger than any lock record'],
      ['notes.txt', 'not valid JSON'],
    ]);
    expect(Object.fromEntries(counter.byCommand)).toEqual({ ListObjectsV2Command: 1, GetObjectCommand: 2 });
  });

  it('lists keys in the same order as the memory store: by UTF-8 bytes', async () => {
    const keys = ['k/\u{1F512}', 'k/\uFFFD', 'k/a', 'k/B'];
    const s3 = s3Store({ client: client(), bucket: BUCKET, prefix: `list/${randomUUID()}/` });
    const memory = memoryStore();
    for (const store of [s3, memory]) {
      for (const key of keys) expect((await store.write(key, freeRecord(1), { absent: true })).ok).toBe(true);
    }
    const order = (await listLocks(s3, 'k/')).found.map((info) => info.key);
    expect(order).toEqual(['k/B', 'k/a', 'k/\uFFFD', 'k/\u{1F512}']);
    expect((await listLocks(memory, 'k/')).found.map((info) => info.key)).toEqual(order);
  });
});

describe('countRequests', () => {
  it('counts every HTTP attempt, retries included, as the server saw them', async () => {
    const c = client();
    const requests = countRequests(c);
    const store: LockStore = s3Store({ client: c, bucket: BUCKET, prefix: PREFIX });
    server.resetRequestLog();
    const key = freshKey();
    // Two failed attempts (500s, retried after a short backoff), then success: three requests for one call.
    server.faults.internalError({ op: 'PutObject', key: PREFIX + key, times: 2 });
    const written = await store.write(key, freeRecord(1), { absent: true });
    expect(written.ok).toBe(true);
    await store.read(key);
    await store.read(freshKey());

    const seen = server.requestLog.filter((entry) => entry.bucket === BUCKET);
    expect(seen.map((entry) => entry.op)).toEqual([
      'PutObject',
      'PutObject',
      'PutObject',
      'GetObject',
      'GetObject',
    ]);
    expect(requests.count).toBe(seen.length);
    expect(Object.fromEntries(requests.byCommand)).toEqual({ PutObjectCommand: 3, GetObjectCommand: 2 });

    requests.reset();
    expect(requests.count).toBe(0);
    expect(requests.byCommand.size).toBe(0);
  });
});

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const { port } = listener.address() as { port: number };
  await new Promise<void>((resolve) => listener.close(() => resolve()));
  return port;
}
