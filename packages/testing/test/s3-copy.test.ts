import { createHash, randomBytes } from 'node:crypto';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  type CopyObjectCommandInput,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  PutObjectCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { startS3Server } from '../src/s3/server.js';
import {
  bodyText,
  expectS3Error,
  MIN_PART,
  rawRequest,
  s3Client,
  sha256,
  uploadInParts,
  useS3Server,
} from './s3-helpers.js';

const Bucket = 'copies';
const local = useS3Server({ bucket: Bucket });

const md5 = (data: string | Buffer) => `"${createHash('md5').update(data).digest('hex')}"`;

async function put(
  Key: string,
  Body: string | Buffer,
  extra: { ContentType?: string; Metadata?: Record<string, string> } = {},
) {
  return local.s3.send(new PutObjectCommand({ Bucket, Key, Body, ...extra }));
}

async function read(Key: string, bucket = Bucket): Promise<string> {
  return bodyText((await local.s3.send(new GetObjectCommand({ Bucket: bucket, Key }))).Body);
}

function copy(Key: string, CopySource: string, extra: Partial<CopyObjectCommandInput> = {}) {
  return local.s3.send(new CopyObjectCommand({ Bucket, Key, CopySource, ...extra }));
}

describe('CopyObject', () => {
  it('copies body, content type and metadata (COPY), answering with CopyObjectResult', async () => {
    await put('src/plain', 'copy me', { ContentType: 'text/plain', Metadata: { owner: 'alice' } });
    const copied = await copy('dst/plain', `${Bucket}/src/plain`);
    expect(copied.CopyObjectResult?.ETag).toBe(md5('copy me'));
    expect(copied.CopyObjectResult?.LastModified).toBeInstanceOf(Date);
    const head = await local.s3.send(new HeadObjectCommand({ Bucket, Key: 'dst/plain' }));
    expect(head).toMatchObject({
      ContentType: 'text/plain',
      Metadata: { owner: 'alice' },
      ETag: md5('copy me'),
    });
    expect(await read('dst/plain')).toBe('copy me');
  });

  it('takes content type and metadata from the request with REPLACE', async () => {
    await put('src/replace', 'x', { ContentType: 'text/plain', Metadata: { owner: 'alice' } });
    await copy('dst/replace', `/${Bucket}/src/replace`, {
      MetadataDirective: 'REPLACE',
      ContentType: 'application/json',
      Metadata: { owner: 'bob' },
    });
    const head = await local.s3.send(new HeadObjectCommand({ Bucket, Key: 'dst/replace' }));
    expect(head.ContentType).toBe('application/json');
    expect(head.Metadata).toEqual({ owner: 'bob' });
  });

  it('decodes a URL-encoded source key, copies across buckets, and takes versionId=null', async () => {
    const Key = 'src/hé llo+?&.txt';
    await put(Key, 'odd key');
    await local.s3.send(new CreateBucketCommand({ Bucket: 'other-bucket' }));
    await local.s3.send(
      new CopyObjectCommand({
        Bucket: 'other-bucket',
        Key: 'k',
        CopySource: `${Bucket}/${encodeURIComponent(Key)}`,
      }),
    );
    expect(await read('k', 'other-bucket')).toBe('odd key');
    await copy('dst/versioned', `${Bucket}/${encodeURIComponent(Key)}?versionId=null`);
    expect(await read('dst/versioned')).toBe('odd key');
    await expectS3Error(
      copy('dst/v', `${Bucket}/src/plain?versionId=3HL4kqtJlcpXroDTDmJ`),
      'NoSuchVersion',
      404,
    );
  });

  it('refuses to copy an object onto itself without REPLACE with 400 InvalidRequest', async () => {
    await put('self', 'same', { Metadata: { v: '1' } });
    await expectS3Error(copy('self', `${Bucket}/self`), 'InvalidRequest', 400);
    await copy('self', `${Bucket}/self`, { MetadataDirective: 'REPLACE', Metadata: { v: '2' } });
    const head = await local.s3.send(new HeadObjectCommand({ Bucket, Key: 'self' }));
    expect(head.Metadata).toEqual({ v: '2' });
    expect(await read('self')).toBe('same');
  });

  it('answers NoSuchKey, NoSuchBucket and InvalidArgument for a source that is not there or not named', async () => {
    await expectS3Error(copy('dst/x', `${Bucket}/src/missing`), 'NoSuchKey', 404);
    await expectS3Error(copy('dst/x', 'no-such-bucket/k'), 'NoSuchBucket', 404);
    await expectS3Error(copy('dst/x', `${Bucket}`), 'InvalidArgument', 400);
    await expectS3Error(
      copy('dst/x', `${Bucket}/src/plain`, { MetadataDirective: 'MOVE' as 'COPY' }),
      'InvalidArgument',
      400,
    );
  });

  it('copies a multipart object into one single-part object', async () => {
    const parts = [randomBytes(MIN_PART), Buffer.from('end')];
    await uploadInParts(local.s3, { Bucket, Key: 'src/multi' }, parts);
    const copied = await copy('dst/multi', `${Bucket}/src/multi`);
    expect(copied.CopyObjectResult?.ETag).toBe(md5(Buffer.concat(parts)));
  });
});

describe('copy-source conditions', () => {
  it('x-amz-copy-source-if-match copies on the source ETag and answers 412 on another', async () => {
    const { ETag } = await put('cond/src', 'v1');
    await expectS3Error(
      copy('cond/dst', `${Bucket}/cond/src`, { CopySourceIfMatch: '"0123456789abcdef0123456789abcdef"' }),
      'PreconditionFailed',
      412,
    );
    await expectS3Error(local.s3.send(new HeadObjectCommand({ Bucket, Key: 'cond/dst' })), 'NotFound', 404);
    await copy('cond/dst', `${Bucket}/cond/src`, { CopySourceIfMatch: ETag });
    expect(await read('cond/dst')).toBe('v1');
  });

  it('x-amz-copy-source-if-none-match answers 412 on the source ETag', async () => {
    const { ETag } = await put('cond/none', 'v1');
    await expectS3Error(
      copy('cond/none-dst', `${Bucket}/cond/none`, { CopySourceIfNoneMatch: ETag }),
      'PreconditionFailed',
      412,
    );
    await copy('cond/none-dst', `${Bucket}/cond/none`, { CopySourceIfNoneMatch: '"other"' });
  });

  it('the date conditions answer 412, and a matching if-match overrides a failing if-unmodified-since', async () => {
    await put('cond/dated', 'v1');
    const past = new Date(Date.now() - 3600_000);
    const future = new Date(Date.now() + 3600_000);
    await expectS3Error(
      copy('cond/d1', `${Bucket}/cond/dated`, { CopySourceIfUnmodifiedSince: past }),
      'PreconditionFailed',
      412,
    );
    await expectS3Error(
      copy('cond/d2', `${Bucket}/cond/dated`, {
        CopySourceIfModifiedSince: new Date() /* not modified since it was written */,
      }),
      'PreconditionFailed',
      412,
    );
    await copy('cond/d3', `${Bucket}/cond/dated`, {
      CopySourceIfModifiedSince: past,
      CopySourceIfUnmodifiedSince: future,
    });
    const { ETag } = await local.s3.send(new HeadObjectCommand({ Bucket, Key: 'cond/dated' }));
    await copy('cond/d4', `${Bucket}/cond/dated`, {
      CopySourceIfMatch: ETag,
      CopySourceIfUnmodifiedSince: past,
    });
    expect(await read('cond/d4')).toBe('v1');
  });
});

describe('conditional copy to the destination', () => {
  it('If-None-Match: * refuses an existing destination, If-Match needs its current ETag', async () => {
    await put('dest/src', 'new');
    const { ETag } = await put('dest/taken', 'old');
    await expectS3Error(
      copy('dest/taken', `${Bucket}/dest/src`, { IfNoneMatch: '*' }),
      'PreconditionFailed',
      412,
    );
    await expectS3Error(
      copy('dest/taken', `${Bucket}/dest/src`, { IfMatch: '"stale"' }),
      'PreconditionFailed',
      412,
    );
    await expectS3Error(copy('dest/absent', `${Bucket}/dest/src`, { IfMatch: ETag }), 'NoSuchKey', 404);
    expect(await read('dest/taken')).toBe('old');
    await copy('dest/taken', `${Bucket}/dest/src`, { IfMatch: ETag });
    expect(await read('dest/taken')).toBe('new');
    await copy('dest/fresh', `${Bucket}/dest/src`, { IfNoneMatch: '*' });
  });

  it('ignores them with conditionalWrites: false, but keeps the copy-source conditions', async () => {
    await using server = await startS3Server({ bucket: Bucket, conditionalWrites: false });
    const s3 = s3Client(server);
    await s3.send(new PutObjectCommand({ Bucket, Key: 'src', Body: 'new' }));
    await s3.send(new PutObjectCommand({ Bucket, Key: 'dst', Body: 'old' }));
    await s3.send(
      new CopyObjectCommand({ Bucket, Key: 'dst', CopySource: `${Bucket}/src`, IfNoneMatch: '*' }),
    );
    expect(await bodyText((await s3.send(new GetObjectCommand({ Bucket, Key: 'dst' }))).Body)).toBe('new');
    await expectS3Error(
      s3.send(
        new CopyObjectCommand({ Bucket, Key: 'dst', CopySource: `${Bucket}/src`, CopySourceIfMatch: '"x"' }),
      ),
      'PreconditionFailed',
      412,
    );
    s3.destroy();
  });
});

describe('UploadPartCopy', () => {
  it('builds parts from byte ranges of existing objects', async () => {
    const source = randomBytes(MIN_PART + 100);
    await put('upc/source', source);
    const Key = 'upc/assembled';
    const { UploadId } = await local.s3.send(new CreateMultipartUploadCommand({ Bucket, Key }));
    const first = await local.s3.send(
      new UploadPartCopyCommand({
        Bucket,
        Key,
        UploadId,
        PartNumber: 1,
        CopySource: `${Bucket}/upc/source`,
        CopySourceRange: `bytes=0-${MIN_PART - 1}`,
      }),
    );
    const second = await local.s3.send(
      new UploadPartCopyCommand({
        Bucket,
        Key,
        UploadId,
        PartNumber: 2,
        CopySource: `${Bucket}/upc/source`,
        CopySourceRange: `bytes=${MIN_PART}-${MIN_PART + 99}`,
      }),
    );
    expect(first.CopyPartResult?.ETag).toBe(md5(source.subarray(0, MIN_PART)));
    await local.s3.send(
      new CompleteMultipartUploadCommand({
        Bucket,
        Key,
        UploadId,
        MultipartUpload: {
          Parts: [
            { PartNumber: 1, ETag: first.CopyPartResult?.ETag },
            { PartNumber: 2, ETag: second.CopyPartResult?.ETag },
          ],
        },
      }),
    );
    const got = await local.s3.send(new GetObjectCommand({ Bucket, Key }));
    expect(sha256(await got.Body!.transformToByteArray())).toBe(sha256(source));
  });

  it('refuses a malformed or out-of-bounds range with 400 InvalidArgument', async () => {
    await put('upc/small', '0123456789');
    const { UploadId } = await local.s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'upc/bad' }));
    for (const range of ['bytes=0-10', 'bytes=5-2', '0-3', 'bytes=-3']) {
      const res = await rawRequest(local.server, {
        method: 'PUT',
        path: `/${Bucket}/upc/bad?partNumber=1&uploadId=${UploadId}`,
        headers: { 'x-amz-copy-source': `${Bucket}/upc/small`, 'x-amz-copy-source-range': range },
      });
      expect([range, res.status, res.code]).toEqual([range, 400, 'InvalidArgument']);
    }
  });
});

describe('GetObjectTagging', () => {
  // The AWS CLI asks for the source's tags before a multipart copy (`aws s3 cp s3://… s3://…` of
  // an object over 8 MB): an answer other than a tag set fails the whole copy.
  it('answers an empty tag set for an object, and NoSuchKey for a missing one', async () => {
    await put('tags/plain', 'tagged?');
    const tags = await local.s3.send(new GetObjectTaggingCommand({ Bucket, Key: 'tags/plain' }));
    expect(tags.TagSet).toEqual([]);
    await expectS3Error(
      local.s3.send(new GetObjectTaggingCommand({ Bucket, Key: 'tags/missing' })),
      'NoSuchKey',
      404,
    );
  });
});
