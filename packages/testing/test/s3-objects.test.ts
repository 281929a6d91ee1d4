import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  type ChecksumAlgorithm,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetBucketLocationCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { startS3Server } from '../src/index.js';
import { bodyText, expectS3Error, rawRequest, s3Client, useS3Server } from './s3-helpers.js';

const Bucket = 'objects';
const local = useS3Server({ bucket: Bucket });

const md5 = (data: string | Buffer) => `"${createHash('md5').update(data).digest('hex')}"`;

describe('startS3Server', () => {
  it('reports where it listens and creates the requested bucket', async () => {
    expect(local.server.endpoint).toBe(`http://127.0.0.1:${local.server.port}`);
    expect(local.server.bucket).toBe(Bucket);
    const head = await local.s3.send(new HeadBucketCommand({ Bucket }));
    expect(head.BucketRegion).toBe('us-east-1');
  });

  it('refuses an invalid initial bucket name', async () => {
    await expect(startS3Server({ bucket: 'Not_Valid' })).rejects.toThrow(/invalid S3 bucket name/);
  });

  it('stops idempotently and refuses connections afterwards', async () => {
    const other = await startS3Server();
    await other.stop();
    await other.stop();
    await expect(rawRequest(other, { method: 'GET', path: '/' })).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('buckets', () => {
  it('creates, lists, locates and deletes a bucket', async () => {
    await local.s3.send(new CreateBucketCommand({ Bucket: 'made-here' }));
    const list = await local.s3.send(new ListBucketsCommand({}));
    expect(list.Buckets?.map((b) => b.Name)).toEqual(['made-here', Bucket]);
    expect(list.Buckets?.[0]?.CreationDate).toBeInstanceOf(Date);
    const location = await local.s3.send(new GetBucketLocationCommand({ Bucket: 'made-here' }));
    expect(location.LocationConstraint ?? '').toBe('');
    await local.s3.send(new DeleteBucketCommand({ Bucket: 'made-here' }));
    await expectS3Error(local.s3.send(new HeadBucketCommand({ Bucket: 'made-here' })), 'NotFound', 404);
  });

  it('answers BucketNotEmpty, NoSuchBucket and InvalidBucketName', async () => {
    await local.s3.send(new PutObjectCommand({ Bucket, Key: 'keeps-bucket-busy', Body: 'x' }));
    await expectS3Error(local.s3.send(new DeleteBucketCommand({ Bucket })), 'BucketNotEmpty', 409);
    await expectS3Error(
      local.s3.send(new DeleteBucketCommand({ Bucket: 'no-such-bucket' })),
      'NoSuchBucket',
      404,
    );
    await expectS3Error(
      local.s3.send(new GetObjectCommand({ Bucket: 'no-such-bucket', Key: 'k' })),
      'NoSuchBucket',
      404,
    );
    await expectS3Error(local.s3.send(new CreateBucketCommand({ Bucket: 'ab' })), 'InvalidBucketName', 400);
    await expectS3Error(
      local.s3.send(new CreateBucketCommand({ Bucket: 'has..dots' })),
      'InvalidBucketName',
      400,
    );
    await expectS3Error(
      local.s3.send(new CreateBucketCommand({ Bucket: '192.168.1.1' })),
      'InvalidBucketName',
      400,
    );
  });

  it('accepts its own region as LocationConstraint and rejects another', async () => {
    const west = await startS3Server({ region: 'eu-west-1' });
    const client = s3Client(west);
    try {
      await client.send(
        new CreateBucketCommand({
          Bucket: 'west',
          CreateBucketConfiguration: { LocationConstraint: 'eu-west-1' },
        }),
      );
      const location = await client.send(new GetBucketLocationCommand({ Bucket: 'west' }));
      expect(location.LocationConstraint).toBe('eu-west-1');
      await expectS3Error(
        client.send(
          new CreateBucketCommand({
            Bucket: 'east',
            CreateBucketConfiguration: { LocationConstraint: 'us-west-2' },
          }),
        ),
        'IllegalLocationConstraintException',
        400,
      );
    } finally {
      client.destroy();
      await west.stop();
    }
  });
});

describe('objects', () => {
  it('round-trips body, ETag, content type and user metadata', async () => {
    const put = await local.s3.send(
      new PutObjectCommand({
        Bucket,
        Key: 'docs/readme.txt',
        Body: 'hello world',
        ContentType: 'text/plain',
        CacheControl: 'no-cache',
        Metadata: { owner: 'alice', 'lock-id': '42' },
      }),
    );
    expect(put.ETag).toBe(md5('hello world'));

    const get = await local.s3.send(new GetObjectCommand({ Bucket, Key: 'docs/readme.txt' }));
    expect(await bodyText(get.Body)).toBe('hello world');
    expect(get.ETag).toBe(put.ETag);
    expect(get.ContentType).toBe('text/plain');
    expect(get.ContentLength).toBe(11);
    expect(get.CacheControl).toBe('no-cache');
    expect(get.Metadata).toEqual({ owner: 'alice', 'lock-id': '42' });
    expect(get.LastModified).toBeInstanceOf(Date);

    const head = await local.s3.send(new HeadObjectCommand({ Bucket, Key: 'docs/readme.txt' }));
    expect(head.ETag).toBe(put.ETag);
    expect(head.ContentLength).toBe(11);
    expect(head.Metadata).toEqual({ owner: 'alice', 'lock-id': '42' });
  });

  it('ignores query-string authentication, so presigned URLs work', async () => {
    await local.s3.send(new PutObjectCommand({ Bucket, Key: 'presigned', Body: 'signed?' }));
    const query =
      'X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=x%2F20250101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20250101T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=00';
    const res = await rawRequest(local.server, { method: 'GET', path: `/${Bucket}/presigned?${query}` });
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: 'signed?' });
  });

  it('overwrites with strong read-after-write consistency', async () => {
    for (let i = 0; i < 5; i++) {
      await local.s3.send(new PutObjectCommand({ Bucket, Key: 'counter', Body: String(i) }));
      const get = await local.s3.send(new GetObjectCommand({ Bucket, Key: 'counter' }));
      expect(await bodyText(get.Body)).toBe(String(i));
    }
  });

  it('stores an empty body and defaults the content type', async () => {
    await local.s3.send(new PutObjectCommand({ Bucket, Key: 'empty', Body: '' }));
    const res = await rawRequest(local.server, { method: 'GET', path: `/${Bucket}/empty` });
    expect(res.status).toBe(200);
    expect(res.body).toBe('');
    expect(res.headers.etag).toBe(md5(''));
    expect(res.headers['x-amz-request-id']).toMatch(/^[0-9A-F]{16}$/);
  });

  it('keeps binary bodies intact, uploaded as a buffer and as an aws-chunked stream', async () => {
    const data = randomBytes(300_000);
    await local.s3.send(new PutObjectCommand({ Bucket, Key: 'bin/buffer', Body: data }));
    // A stream of known length makes the SDK send Content-Encoding: aws-chunked with a checksum trailer.
    const chunks = [data.subarray(0, 100_000), data.subarray(100_000, 250_000), data.subarray(250_000)];
    const streamed = await local.s3.send(
      new PutObjectCommand({
        Bucket,
        Key: 'bin/stream',
        Body: Readable.from(chunks),
        ContentLength: data.length,
      }),
    );
    expect(streamed.ETag).toBe(md5(data));
    for (const Key of ['bin/buffer', 'bin/stream']) {
      const get = await local.s3.send(new GetObjectCommand({ Bucket, Key }));
      expect(Buffer.from(await get.Body!.transformToByteArray()).equals(data)).toBe(true);
    }
  });

  it('accepts large uploads the SDK sends with Expect: 100-continue', async () => {
    const data = randomBytes(3 * 1024 * 1024);
    const put = await local.s3.send(new PutObjectCommand({ Bucket, Key: 'bin/large', Body: data }));
    expect(put.ETag).toBe(md5(data));
    const get = await local.s3.send(new GetObjectCommand({ Bucket, Key: 'bin/large' }));
    expect(Buffer.from(await get.Body!.transformToByteArray()).equals(data)).toBe(true);
  });

  it.each<ChecksumAlgorithm>(['CRC32', 'CRC32C', 'CRC64NVME', 'SHA1', 'SHA256'])(
    'verifies and returns a %s checksum',
    async (algorithm) => {
      const Key = `checksum/${algorithm}`;
      const put = await local.s3.send(
        new PutObjectCommand({ Bucket, Key, Body: 'checked body', ChecksumAlgorithm: algorithm }),
      );
      const field = `Checksum${algorithm}` as const;
      expect(put[field]).toBeTruthy();
      // The SDK validates the returned checksum against the body itself; a wrong value would throw.
      const get = await local.s3.send(new GetObjectCommand({ Bucket, Key, ChecksumMode: 'ENABLED' }));
      expect(get[field]).toBe(put[field]);
      expect(await bodyText(get.Body)).toBe('checked body');
    },
  );

  it('serves byte ranges', async () => {
    await local.s3.send(new PutObjectCommand({ Bucket, Key: 'ranged', Body: '0123456789' }));
    const part = await local.s3.send(new GetObjectCommand({ Bucket, Key: 'ranged', Range: 'bytes=2-5' }));
    expect(await bodyText(part.Body)).toBe('2345');
    expect(part.ContentRange).toBe('bytes 2-5/10');
    const tail = await local.s3.send(new GetObjectCommand({ Bucket, Key: 'ranged', Range: 'bytes=-3' }));
    expect(await bodyText(tail.Body)).toBe('789');
    await expectS3Error(
      local.s3.send(new GetObjectCommand({ Bucket, Key: 'ranged', Range: 'bytes=10-' })),
      'InvalidRange',
      416,
    );
  });

  it('answers NoSuchKey on GET and NotFound on HEAD of a missing key', async () => {
    await expectS3Error(local.s3.send(new GetObjectCommand({ Bucket, Key: 'missing' })), 'NoSuchKey', 404);
    await expectS3Error(local.s3.send(new HeadObjectCommand({ Bucket, Key: 'missing' })), 'NotFound', 404);
    const raw = await rawRequest(local.server, { method: 'GET', path: `/${Bucket}/missing` });
    expect(raw.body).toContain('<Key>missing</Key>');
    expect(raw.body).toContain('<RequestId>');
    const head = await rawRequest(local.server, { method: 'HEAD', path: `/${Bucket}/missing` });
    expect(head.status).toBe(404);
    expect(head.body).toBe('');
  });

  it('deletes objects, and deleting a missing key succeeds', async () => {
    await local.s3.send(new PutObjectCommand({ Bucket, Key: 'doomed', Body: 'x' }));
    const del = await local.s3.send(new DeleteObjectCommand({ Bucket, Key: 'doomed' }));
    expect(del.$metadata.httpStatusCode).toBe(204);
    await expectS3Error(local.s3.send(new HeadObjectCommand({ Bucket, Key: 'doomed' })), 'NotFound', 404);
    const again = await local.s3.send(new DeleteObjectCommand({ Bucket, Key: 'doomed' }));
    expect(again.$metadata.httpStatusCode).toBe(204);
  });

  it('keeps keys verbatim: spaces, unicode, dot segments and slashes', async () => {
    const keys = ['with space', 'ünï/cødé 🚀', 'a/../b', './x', 'double//slash', 'plus+sign&amp', 'ends/'];
    for (const Key of keys) await local.s3.send(new PutObjectCommand({ Bucket, Key, Body: Key }));
    for (const Key of keys) {
      const get = await local.s3.send(new GetObjectCommand({ Bucket, Key }));
      expect(await bodyText(get.Body)).toBe(Key);
    }
  });
});

describe('DeleteObjects', () => {
  it('deletes many keys and reports each one', async () => {
    for (const Key of ['batch/1', 'batch/2', 'batch/3'])
      await local.s3.send(new PutObjectCommand({ Bucket, Key, Body: Key }));
    const res = await local.s3.send(
      new DeleteObjectsCommand({
        Bucket,
        Delete: { Objects: [{ Key: 'batch/1' }, { Key: 'batch/2' }, { Key: 'batch/never-existed' }] },
      }),
    );
    expect(res.Deleted?.map((d) => d.Key).sort()).toEqual(['batch/1', 'batch/2', 'batch/never-existed']);
    expect(res.Errors ?? []).toEqual([]);
    await expectS3Error(local.s3.send(new HeadObjectCommand({ Bucket, Key: 'batch/1' })), 'NotFound', 404);
    const left = await local.s3.send(new HeadObjectCommand({ Bucket, Key: 'batch/3' }));
    expect(left.ContentLength).toBe(7);
  });

  it('reports only failures in quiet mode, including per-key ETag preconditions', async () => {
    const a = await local.s3.send(new PutObjectCommand({ Bucket, Key: 'quiet/a', Body: 'a' }));
    await local.s3.send(new PutObjectCommand({ Bucket, Key: 'quiet/b', Body: 'b' }));
    const res = await local.s3.send(
      new DeleteObjectsCommand({
        Bucket,
        Delete: {
          Quiet: true,
          Objects: [
            { Key: 'quiet/a', ETag: a.ETag },
            { Key: 'quiet/b', ETag: '"0123456789abcdef0123456789abcdef"' },
            { Key: 'quiet/absent', ETag: a.ETag },
          ],
        },
      }),
    );
    expect(res.Deleted ?? []).toEqual([]);
    expect(res.Errors?.map((e) => [e.Key, e.Code])).toEqual([
      ['quiet/b', 'PreconditionFailed'],
      ['quiet/absent', 'NoSuchKey'],
    ]);
    await expectS3Error(local.s3.send(new HeadObjectCommand({ Bucket, Key: 'quiet/a' })), 'NotFound', 404);
    expect((await local.s3.send(new HeadObjectCommand({ Bucket, Key: 'quiet/b' }))).ContentLength).toBe(1);
  });
});
