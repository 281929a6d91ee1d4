import type { Readable } from 'node:stream';
import { Client } from 'minio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type S3Server, startS3Server } from '../src/s3/server.js';

// A second, independent S3 client implementation: it signs, encodes keys and parses XML its own way.
let server: S3Server;
let mc: Client;
const bucket = 'via-minio';

beforeAll(async () => {
  server = await startS3Server();
  mc = new Client({
    endPoint: '127.0.0.1',
    port: server.port,
    useSSL: false,
    accessKey: 'minio-access',
    secretKey: 'minio-secret',
    pathStyle: true,
    region: 'us-east-1',
  });
  await mc.makeBucket(bucket, 'us-east-1');
});

afterAll(async () => {
  await server.stop();
});

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

async function failure(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    return err as { code?: string; message: string };
  }
  throw new Error('expected the minio call to fail');
}

describe('minio client', () => {
  it('creates and finds buckets', async () => {
    expect(await mc.bucketExists(bucket)).toBe(true);
    expect(await mc.bucketExists('not-there')).toBe(false);
    expect((await mc.listBuckets()).map((b) => b.name)).toContain(bucket);
  });

  it('puts, stats and gets an object with metadata', async () => {
    const put = await mc.putObject(bucket, 'dir/hello é.txt', Buffer.from('hello from minio'), 16, {
      'Content-Type': 'text/plain',
      'X-Amz-Meta-Owner': 'bob',
    });
    expect(put.etag).toMatch(/^[0-9a-f]{32}$/);
    const stat = await mc.statObject(bucket, 'dir/hello é.txt');
    expect(stat.size).toBe(16);
    expect(stat.etag).toBe(put.etag);
    expect(stat.metaData).toMatchObject({ 'content-type': 'text/plain', owner: 'bob' });
    expect(await readAll(await mc.getObject(bucket, 'dir/hello é.txt'))).toBe('hello from minio');
  });

  it('lists with ListObjects (v1) and ListObjectsV2, flat and by prefix', async () => {
    for (const key of ['list/a', 'list/b/1', 'list/b/2', 'list/c']) await mc.putObject(bucket, key, key);
    const v1 = await collect(mc.listObjects(bucket, 'list/', false));
    // minio yields a page's objects first, then its common prefixes.
    expect(v1.map((o) => o.name ?? o.prefix)).toEqual(['list/a', 'list/c', 'list/b/']);
    const v2 = await collect(mc.listObjectsV2(bucket, 'list/', true));
    expect(v2.map((o) => o.name)).toEqual(['list/a', 'list/b/1', 'list/b/2', 'list/c']);
    expect(v2[0]?.size).toBe(6);
  });

  it('removes one object and many objects', async () => {
    for (const key of ['rm/1', 'rm/2', 'rm/3']) await mc.putObject(bucket, key, key);
    await mc.removeObject(bucket, 'rm/1');
    const errors = await mc.removeObjects(bucket, ['rm/2', 'rm/3']);
    expect(errors.filter((e) => e?.Error?.Code)).toEqual([]);
    expect(await collect(mc.listObjectsV2(bucket, 'rm/', true))).toEqual([]);
  });

  it('a create-only put of an existing key fails with 412 PreconditionFailed', async () => {
    await mc.putObject(bucket, 'exclusive', 'first', 5, { 'If-None-Match': '*' });
    const err = await failure(mc.putObject(bucket, 'exclusive', 'second', 6, { 'If-None-Match': '*' }));
    expect(err.code).toBe('PreconditionFailed');
    expect(await readAll(await mc.getObject(bucket, 'exclusive'))).toBe('first');
  });

  it('an If-Match put with a stale ETag fails, with the current one succeeds', async () => {
    const v1 = await mc.putObject(bucket, 'cas', 'v1');
    await mc.putObject(bucket, 'cas', 'v2', 2, { 'If-Match': `"${v1.etag}"` });
    const err = await failure(mc.putObject(bucket, 'cas', 'v3', 2, { 'If-Match': `"${v1.etag}"` }));
    expect(err.code).toBe('PreconditionFailed');
    expect(await readAll(await mc.getObject(bucket, 'cas'))).toBe('v2');
  });

  it('reports a missing key', async () => {
    const err = await failure(mc.getObject(bucket, 'missing'));
    expect(err.code).toBe('NoSuchKey');
  });
});
