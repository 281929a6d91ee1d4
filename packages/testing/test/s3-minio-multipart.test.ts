import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { Client, CopyConditions, CopyDestinationOptions, CopySourceOptions } from 'minio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type S3Server, startS3Server } from '../src/s3/server.js';
import { MIN_PART, multipartEtag, sha256 } from './s3-helpers.js';

// The minio client as a second, independent client for multipart uploads and copies: it builds its
// own requests (Content-MD5 on every part, unquoted ETags in Complete, part numbers from 2) and
// parses the answers its own way.
let server: S3Server;
let mc: Client;
const bucket = 'minio-multi';

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
    partSize: MIN_PART, // the smallest it allows, so that a 12 MiB object takes three parts
  });
  await mc.makeBucket(bucket, 'us-east-1');
});

afterAll(async () => {
  await server.stop();
});

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

async function failure(promise: Promise<unknown>): Promise<{ code?: string }> {
  try {
    await promise;
  } catch (err) {
    return err as { code?: string };
  }
  throw new Error('expected the minio call to fail');
}

describe('minio client: multipart', () => {
  it('uploads a stream bigger than its part size in parts; the object reads back whole', async () => {
    const data = randomBytes(12 * 1024 * 1024);
    server.resetRequestLog();
    // In 64 KiB chunks, as a file stream delivers them: minio cuts parts from the stream.
    const chunks = Array.from({ length: data.length / 65_536 }, (_, i) =>
      data.subarray(i * 65_536, (i + 1) * 65_536),
    );
    const put = await mc.putObject(bucket, 'big.bin', Readable.from(chunks), data.length);
    const ops = server.requestLog.map((e) => e.op);
    expect(ops.filter((op) => op === 'UploadPart')).toHaveLength(3);
    expect(ops).toContain('ListMultipartUploads'); // it first looks for an upload to resume
    expect(ops.at(-1)).toBe('CompleteMultipartUpload');

    const parts = [0, 1, 2].map((i) => data.subarray(i * MIN_PART, (i + 1) * MIN_PART));
    expect(`"${put.etag}"`).toBe(multipartEtag(parts));
    const stat = await mc.statObject(bucket, 'big.bin');
    expect(stat.size).toBe(data.length);
    expect(sha256(await readAll(await mc.getObject(bucket, 'big.bin')))).toBe(sha256(data));
  });

  it('lists an incomplete upload with its parts, and removes it', async () => {
    const uploadId = await mc.initiateNewMultipartUpload(bucket, 'unfinished', {});
    await mc.uploadPart(
      { bucketName: bucket, objectName: 'unfinished', uploadID: uploadId, partNumber: 1, headers: {} },
      Buffer.from('some bytes'),
    );
    const listed: { key: string; uploadId: string; size: number }[] = [];
    for await (const upload of mc.listIncompleteUploads(bucket, 'unfin', true)) listed.push(upload);
    expect(listed.map((u) => [u.key, u.uploadId, u.size])).toEqual([['unfinished', uploadId, 10]]);

    await mc.removeIncompleteUpload(bucket, 'unfinished');
    const after: unknown[] = [];
    for await (const upload of mc.listIncompleteUploads(bucket, 'unfin', true)) after.push(upload);
    expect(after).toEqual([]);
  });

  it('composes an object from others with UploadPartCopy', async () => {
    const first = randomBytes(MIN_PART);
    await mc.putObject(bucket, 'part-a', first);
    await mc.putObject(bucket, 'part-b', 'the end');
    server.resetRequestLog();
    await mc.composeObject(new CopyDestinationOptions({ Bucket: bucket, Object: 'composed' }), [
      new CopySourceOptions({ Bucket: bucket, Object: 'part-a' }),
      new CopySourceOptions({ Bucket: bucket, Object: 'part-b' }),
    ]);
    expect(server.requestLog.filter((e) => e.op === 'UploadPartCopy')).toHaveLength(2);
    const composed = await readAll(await mc.getObject(bucket, 'composed'));
    expect(sha256(composed)).toBe(sha256(Buffer.concat([first, Buffer.from('the end')])));
  });
});

describe('minio client: copy', () => {
  it('copies with copy conditions: a stale ETag gets PreconditionFailed, the current one copies', async () => {
    const put = await mc.putObject(bucket, 'copy-src', 'original', 8, { 'Content-Type': 'text/plain' });
    const stale = new CopyConditions();
    stale.setMatchETag('"0123456789abcdef0123456789abcdef"');
    const err = await failure(mc.copyObject(bucket, 'copy-dst', `/${bucket}/copy-src`, stale));
    expect(err.code).toBe('PreconditionFailed');

    const current = new CopyConditions();
    current.setMatchETag(put.etag);
    const copied = await mc.copyObject(bucket, 'copy-dst', `/${bucket}/copy-src`, current);
    expect((copied as { etag: string }).etag).toBe(put.etag); // the V1 result of the V1 call
    expect((await readAll(await mc.getObject(bucket, 'copy-dst'))).toString()).toBe('original');
    expect((await mc.statObject(bucket, 'copy-dst')).metaData['content-type']).toBe('text/plain');
  });

  it('copies with new metadata (REPLACE) through CopySourceOptions and CopyDestinationOptions', async () => {
    await mc.putObject(bucket, 'meta-src', 'with metadata', 13, { 'X-Amz-Meta-Owner': 'alice' });
    await mc.copyObject(
      new CopySourceOptions({ Bucket: bucket, Object: 'meta-src' }),
      new CopyDestinationOptions({
        Bucket: bucket,
        Object: 'meta-dst',
        MetadataDirective: 'REPLACE',
        UserMetadata: { owner: 'bob' },
      }),
    );
    const stat = await mc.statObject(bucket, 'meta-dst');
    expect(stat.metaData.owner).toBe('bob');
    expect(stat.size).toBe(13);
  });
});
