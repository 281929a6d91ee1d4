import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { afterEach, describe, expect, it } from 'vitest';
import { startS3Server } from '../src/s3/server.js';
import {
  bodyText,
  expectS3Error,
  MIN_PART,
  multipartEtag,
  rawRequest,
  s3Client,
  sha256,
  uploadInParts,
  useS3Server,
} from './s3-helpers.js';

const Bucket = 'multipart';
const local = useS3Server({ bucket: Bucket });

afterEach(() => {
  local.server.faults.clear();
});

/** What GetObject returns, as bytes; the SDK validates any full-object checksum on the way. */
async function download(Key: string): Promise<Buffer> {
  const got = await local.s3.send(new GetObjectCommand({ Bucket, Key }));
  return Buffer.from(await got.Body!.transformToByteArray());
}

async function startUpload(Key: string): Promise<string> {
  const { UploadId } = await local.s3.send(new CreateMultipartUploadCommand({ Bucket, Key }));
  return UploadId!;
}

async function putPart(Key: string, UploadId: string, PartNumber: number, Body: Buffer) {
  const { ETag } = await local.s3.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body }));
  return { PartNumber, ETag: ETag! };
}

function complete(
  Key: string,
  UploadId: string,
  Parts: { PartNumber: number; ETag: string }[],
  extra: { IfNoneMatch?: string; IfMatch?: string } = {},
) {
  return local.s3.send(
    new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts }, ...extra }),
  );
}

/** lib-storage's default part size: 5 MiB. */
function partsOf(data: Buffer, size = MIN_PART): Buffer[] {
  const parts = [];
  for (let at = 0; at < data.length; at += size) parts.push(data.subarray(at, at + size));
  return parts;
}

describe('@aws-sdk/lib-storage Upload', () => {
  it.each([
    ['20 MB', 20_000_000],
    ['100 MB, twice the default maxObjectSize', 100_000_000],
  ])('uploads %s in parts; GetObject returns the same bytes under a "-N" ETag', async (_, size) => {
    const data = randomBytes(size);
    const parts = partsOf(data);
    const upload = new Upload({ client: local.s3, params: { Bucket, Key: `big/${size}`, Body: data } });
    const done = await upload.done();
    expect(done.ETag).toBe(multipartEtag(parts));
    expect(done.ETag).toMatch(new RegExp(`^"[0-9a-f]{32}-${parts.length}"$`));

    const head = await local.s3.send(new HeadObjectCommand({ Bucket, Key: `big/${size}` }));
    expect(head.ContentLength).toBe(size);
    expect(head.ETag).toBe(done.ETag);
    expect(sha256(await download(`big/${size}`))).toBe(sha256(data));
  });

  it('keeps the COMPOSITE CRC32 that lib-storage asks for, which the SDK then skips validating', async () => {
    const data = randomBytes(MIN_PART + 1000);
    await new Upload({ client: local.s3, params: { Bucket, Key: 'composite', Body: data } }).done();
    const got = await local.s3.send(
      new GetObjectCommand({ Bucket, Key: 'composite', ChecksumMode: 'ENABLED' }),
    );
    const partCrcs = partsOf(data).map((p) => {
      const b = Buffer.alloc(4);
      b.writeUInt32BE(crc32(p));
      return b;
    });
    const expected = Buffer.alloc(4);
    expected.writeUInt32BE(crc32(Buffer.concat(partCrcs)));
    expect(got.ChecksumCRC32).toBe(`${expected.toString('base64')}-2`);
    expect(got.ChecksumType).toBe('COMPOSITE');
    expect(sha256(await got.Body!.transformToByteArray())).toBe(sha256(data));
  });
});

describe('multipart upload through the SDK', () => {
  it('creates, uploads, lists and completes; the object keeps what Create said about it', async () => {
    const Key = 'sdk/whole';
    const { UploadId, $metadata } = await local.s3.send(
      new CreateMultipartUploadCommand({
        Bucket,
        Key,
        ContentType: 'text/plain',
        Metadata: { owner: 'alice' },
        CacheControl: 'no-cache',
      }),
    );
    expect($metadata.httpStatusCode).toBe(200);
    const parts = [randomBytes(MIN_PART), randomBytes(MIN_PART), Buffer.from('tail')];
    const uploaded = [];
    for (const [i, body] of parts.entries()) uploaded.push(await putPart(Key, UploadId!, i + 1, body));
    expect(uploaded[0]!.ETag).toMatch(/^"[0-9a-f]{32}"$/);

    const listed = await local.s3.send(new ListPartsCommand({ Bucket, Key, UploadId }));
    expect(listed.Parts?.map((p) => [p.PartNumber, p.Size, p.ETag])).toEqual(
      uploaded.map((u, i) => [u.PartNumber, parts[i]!.length, u.ETag]),
    );
    expect(listed.IsTruncated).toBe(false);
    const page = await local.s3.send(new ListPartsCommand({ Bucket, Key, UploadId, MaxParts: 2 }));
    expect(page.Parts?.map((p) => p.PartNumber)).toEqual([1, 2]);
    expect(page.IsTruncated).toBe(true);
    const rest = await local.s3.send(
      new ListPartsCommand({ Bucket, Key, UploadId, PartNumberMarker: page.NextPartNumberMarker }),
    );
    expect(rest.Parts?.map((p) => p.PartNumber)).toEqual([3]);

    const pending = await local.s3.send(new ListMultipartUploadsCommand({ Bucket, Prefix: 'sdk/' }));
    expect(pending.Uploads?.map((u) => [u.Key, u.UploadId])).toEqual([[Key, UploadId]]);
    expect(pending.Uploads?.[0]?.Initiated).toBeInstanceOf(Date);

    const done = await complete(Key, UploadId!, uploaded);
    expect(done.ETag).toBe(multipartEtag(parts));
    expect(done.Key).toBe(Key);
    expect(done.Location).toContain(`/${Bucket}/sdk/whole`);

    const head = await local.s3.send(new HeadObjectCommand({ Bucket, Key }));
    expect(head).toMatchObject({
      ContentType: 'text/plain',
      Metadata: { owner: 'alice' },
      CacheControl: 'no-cache',
      ContentLength: MIN_PART * 2 + 4,
    });
    expect(sha256(await download(Key))).toBe(sha256(Buffer.concat(parts)));
    // A completed upload is gone.
    expect(
      (await local.s3.send(new ListMultipartUploadsCommand({ Bucket, Prefix: 'sdk/' }))).Uploads,
    ).toBeUndefined();
    await expectS3Error(complete(Key, UploadId!, uploaded), 'NoSuchUpload', 404);
  });

  it('uses only the listed parts, with gaps in the numbers, and a part uploaded again replaces the first', async () => {
    const Key = 'sdk/gaps';
    const UploadId = await startUpload(Key);
    const first = randomBytes(MIN_PART);
    await putPart(Key, UploadId, 3, randomBytes(MIN_PART)); // replaced below
    const three = await putPart(Key, UploadId, 3, first);
    await putPart(Key, UploadId, 5, Buffer.from('left out'));
    const seven = await putPart(Key, UploadId, 7, Buffer.from('last'));
    const done = await complete(Key, UploadId, [three, seven]);
    expect(done.ETag).toBe(multipartEtag([first, Buffer.from('last')]));
    expect(sha256(await download(Key))).toBe(sha256(Buffer.concat([first, Buffer.from('last')])));
  });

  it('completes a single small part: only parts before the last must be 5 MiB', async () => {
    const done = await uploadInParts(local.s3, { Bucket, Key: 'sdk/small' }, [Buffer.from('tiny')]);
    expect(done.ETag).toBe(multipartEtag([Buffer.from('tiny')]));
    expect(
      await bodyText((await local.s3.send(new GetObjectCommand({ Bucket, Key: 'sdk/small' }))).Body),
    ).toBe('tiny');
  });

  it('lists uploads by key with a delimiter, and pages through them', async () => {
    const ids: Record<string, string> = {};
    for (const key of ['list/a', 'list/b/1', 'list/b/2', 'list/c']) ids[key] = await startUpload(key);
    const again = await startUpload('list/a');
    const rolled = await local.s3.send(
      new ListMultipartUploadsCommand({ Bucket, Prefix: 'list/', Delimiter: '/' }),
    );
    expect(rolled.Uploads?.map((u) => u.UploadId)).toEqual([ids['list/a'], again, ids['list/c']]);
    expect(rolled.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['list/b/']);

    const seen: string[] = [];
    let markers: { KeyMarker?: string; UploadIdMarker?: string } = {};
    for (let i = 0; i < 10; i++) {
      const page = await local.s3.send(
        new ListMultipartUploadsCommand({ Bucket, Prefix: 'list/', MaxUploads: 2, ...markers }),
      );
      seen.push(...(page.Uploads ?? []).map((u) => `${u.Key} ${u.UploadId}`));
      if (!page.IsTruncated) break;
      markers = { KeyMarker: page.NextKeyMarker, UploadIdMarker: page.NextUploadIdMarker };
    }
    expect(seen).toEqual(
      [
        ['list/a', ids['list/a']],
        ['list/a', again],
        ['list/b/1', ids['list/b/1']],
        ['list/b/2', ids['list/b/2']],
        ['list/c', ids['list/c']],
      ].map(([k, id]) => `${k} ${id}`),
    );
    for (const [Key, UploadId] of [...Object.entries(ids), ['list/a', again]]) {
      await local.s3.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId }));
    }
  });

  it('records the operations in the request log, and faults can target them', async () => {
    const fault = local.server.faults.slowDown({ op: 'UploadPart', times: 1 });
    local.server.resetRequestLog();
    await uploadInParts(local.s3, { Bucket, Key: 'sdk/logged' }, [Buffer.from('x')]);
    expect(fault.hits).toBe(1);
    expect(local.server.requestLog.map((e) => [e.op, e.status])).toEqual([
      ['CreateMultipartUpload', 200],
      ['UploadPart', 503],
      ['UploadPart', 200],
      ['CompleteMultipartUpload', 200],
    ]);
  });
});

describe('part rules at CompleteMultipartUpload', () => {
  it('refuses a part before the last that is under 5 MiB with 400 EntityTooSmall', async () => {
    const Key = 'rules/small';
    const UploadId = await startUpload(Key);
    const parts = [
      await putPart(Key, UploadId, 1, randomBytes(MIN_PART - 1)),
      await putPart(Key, UploadId, 2, Buffer.from('last')),
    ];
    await expectS3Error(complete(Key, UploadId, parts), 'EntityTooSmall', 400);
    // Nothing was written and the upload is still there: a bigger part 1 fixes it.
    await expectS3Error(local.s3.send(new HeadObjectCommand({ Bucket, Key })), 'NotFound', 404);
    parts[0] = await putPart(Key, UploadId, 1, randomBytes(MIN_PART));
    expect((await complete(Key, UploadId, parts)).ETag).toMatch(/-2"$/);
  });

  it('refuses parts out of order with 400 InvalidPartOrder', async () => {
    const Key = 'rules/order';
    const UploadId = await startUpload(Key);
    const one = await putPart(Key, UploadId, 1, randomBytes(MIN_PART));
    const two = await putPart(Key, UploadId, 2, Buffer.from('last'));
    await expectS3Error(complete(Key, UploadId, [two, one]), 'InvalidPartOrder', 400);
    await expectS3Error(complete(Key, UploadId, [one, one]), 'InvalidPartOrder', 400);
    await local.s3.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId }));
  });

  it('refuses a wrong ETag or a part never uploaded with 400 InvalidPart', async () => {
    const Key = 'rules/etag';
    const UploadId = await startUpload(Key);
    const one = await putPart(Key, UploadId, 1, Buffer.from('only'));
    await expectS3Error(
      complete(Key, UploadId, [{ PartNumber: 1, ETag: '"0123456789abcdef0123456789abcdef"' }]),
      'InvalidPart',
      400,
    );
    await expectS3Error(
      complete(Key, UploadId, [one, { PartNumber: 2, ETag: one.ETag }]),
      'InvalidPart',
      400,
    );
    // The ETag may come without its quotes, as the minio client sends it.
    const done = await complete(Key, UploadId, [{ PartNumber: 1, ETag: one.ETag.slice(1, -1) }]);
    expect(done.ETag).toBe(multipartEtag([Buffer.from('only')]));
  });

  it('answers 404 NoSuchUpload for an unknown or aborted upload id, or the id of another key', async () => {
    const Key = 'rules/unknown';
    const UploadId = await startUpload(Key);
    const one = await putPart(Key, UploadId, 1, Buffer.from('x'));
    const abort = await local.s3.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId }));
    expect(abort.$metadata.httpStatusCode).toBe(204);
    for (const id of [UploadId, 'no-such-upload']) {
      await expectS3Error(putPart(Key, id, 1, Buffer.from('x')), 'NoSuchUpload', 404);
      await expectS3Error(complete(Key, id, [one]), 'NoSuchUpload', 404);
      await expectS3Error(
        local.s3.send(new ListPartsCommand({ Bucket, Key, UploadId: id })),
        'NoSuchUpload',
        404,
      );
      await expectS3Error(
        local.s3.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: id })),
        'NoSuchUpload',
        404,
      );
    }
    const other = await startUpload('rules/other');
    await expectS3Error(putPart(Key, other, 1, Buffer.from('x')), 'NoSuchUpload', 404);
  });

  it('refuses part numbers outside 1..10000 with 400 InvalidArgument', async () => {
    const Key = 'rules/numbers';
    const UploadId = await startUpload(Key);
    for (const n of ['0', '10001', 'one']) {
      const res = await rawRequest(local.server, {
        method: 'PUT',
        path: `/${Bucket}/${Key}?partNumber=${n}&uploadId=${UploadId}`,
        headers: { 'content-length': 1 },
        body: 'x',
      });
      expect([res.status, res.code]).toEqual([400, 'InvalidArgument']);
    }
    expect((await putPart(Key, UploadId, 10_000, Buffer.from('x'))).ETag).toMatch(/^"/);
  });

  it('refuses a Complete body that lists no part with 400 MalformedXML', async () => {
    const Key = 'rules/empty';
    const UploadId = await startUpload(Key);
    const body = '<CompleteMultipartUpload></CompleteMultipartUpload>';
    const res = await rawRequest(local.server, {
      method: 'POST',
      path: `/${Bucket}/${Key}?uploadId=${UploadId}`,
      headers: { 'content-length': body.length },
      body,
    });
    expect([res.status, res.code]).toEqual([400, 'MalformedXML']);
  });

  it('limits one part, not the object, to maxObjectSize', async () => {
    await using server = await startS3Server({ bucket: Bucket, maxObjectSize: 1024 });
    const s3 = s3Client(server);
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'k' }));
    await expectS3Error(
      s3.send(new UploadPartCommand({ Bucket, Key: 'k', UploadId, PartNumber: 1, Body: randomBytes(2048) })),
      'EntityTooLarge',
      400,
    );
    s3.destroy();
  });
});

describe('conditional CompleteMultipartUpload', () => {
  async function ready(Key: string) {
    const UploadId = await startUpload(Key);
    const part = await putPart(Key, UploadId, 1, Buffer.from('from the upload'));
    return { UploadId, parts: [part] };
  }

  it('If-None-Match: * creates a new key, and refuses an existing one with 412 PreconditionFailed', async () => {
    const fresh = await ready('cond/fresh');
    await complete('cond/fresh', fresh.UploadId, fresh.parts, { IfNoneMatch: '*' });

    await local.s3.send(new PutObjectCommand({ Bucket, Key: 'cond/taken', Body: 'already here' }));
    const { UploadId, parts } = await ready('cond/taken');
    await expectS3Error(
      complete('cond/taken', UploadId, parts, { IfNoneMatch: '*' }),
      'PreconditionFailed',
      412,
    );
    expect(
      await bodyText((await local.s3.send(new GetObjectCommand({ Bucket, Key: 'cond/taken' }))).Body),
    ).toBe('already here');
    // 412 leaves the upload in place: it can still be aborted.
    await local.s3.send(new AbortMultipartUploadCommand({ Bucket, Key: 'cond/taken', UploadId }));
  });

  it('If-Match completes over the current ETag, 412 on another, 404 NoSuchKey on a missing key', async () => {
    const { ETag } = await local.s3.send(new PutObjectCommand({ Bucket, Key: 'cond/cas', Body: 'v1' }));
    const stale = await ready('cond/cas');
    await expectS3Error(
      complete('cond/cas', stale.UploadId, stale.parts, { IfMatch: '"0123456789abcdef0123456789abcdef"' }),
      'PreconditionFailed',
      412,
    );
    await complete('cond/cas', stale.UploadId, stale.parts, { IfMatch: ETag! });
    expect(
      await bodyText((await local.s3.send(new GetObjectCommand({ Bucket, Key: 'cond/cas' }))).Body),
    ).toBe('from the upload');

    const missing = await ready('cond/missing');
    await expectS3Error(
      complete('cond/missing', missing.UploadId, missing.parts, { IfMatch: ETag! }),
      'NoSuchKey',
      404,
    );
  });

  it('answers 409 ConditionalRequestConflict when the key changes while the Complete is in flight', async () => {
    const { UploadId, parts } = await ready('cond/race');
    local.server.faults.latency({ op: 'CompleteMultipartUpload' }, 300);
    const completing = complete('cond/race', UploadId, parts, { IfNoneMatch: '*' });
    await new Promise((r) => setTimeout(r, 50));
    await local.s3.send(new PutObjectCommand({ Bucket, Key: 'cond/race', Body: 'first' }));
    await expectS3Error(completing, 'ConditionalRequestConflict', 409);
    local.server.faults.clear();
    // As S3 advises after a 409, the upload has to be started over.
    await expectS3Error(complete('cond/race', UploadId, parts), 'NoSuchUpload', 404);
  });

  it('ignores the conditions with conditionalWrites: false, as PutObject does', async () => {
    await using server = await startS3Server({ bucket: Bucket, conditionalWrites: false });
    const s3 = s3Client(server);
    await s3.send(new PutObjectCommand({ Bucket, Key: 'k', Body: 'old' }));
    await uploadInParts(s3, { Bucket, Key: 'k' }, [Buffer.from('new')], { IfNoneMatch: '*' });
    expect(await bodyText((await s3.send(new GetObjectCommand({ Bucket, Key: 'k' }))).Body)).toBe('new');
    s3.destroy();
  });
});

describe('checksums', () => {
  it('a FULL_OBJECT CRC32 upload gets the CRC32 of the whole body, which GetObject validates', async () => {
    const data = randomBytes(MIN_PART + 10);
    const done = await uploadInParts(
      local.s3,
      { Bucket, Key: 'sum/full', ChecksumAlgorithm: 'CRC32', ChecksumType: 'FULL_OBJECT' },
      partsOf(data),
    );
    const whole = Buffer.alloc(4);
    whole.writeUInt32BE(crc32(data));
    expect(done.ChecksumCRC32).toBe(whole.toString('base64'));
    expect(done.ChecksumType).toBe('FULL_OBJECT');
    const got = await local.s3.send(
      new GetObjectCommand({ Bucket, Key: 'sum/full', ChecksumMode: 'ENABLED' }),
    );
    expect(got.ChecksumCRC32).toBe(whole.toString('base64'));
    expect(sha256(await got.Body!.transformToByteArray())).toBe(sha256(data));
  });

  it('a SHA256 upload gets a COMPOSITE "-N" checksum, and parts of another algorithm are refused', async () => {
    const Key = 'sum/sha';
    const { UploadId, ChecksumAlgorithm } = await local.s3.send(
      new CreateMultipartUploadCommand({ Bucket, Key, ChecksumAlgorithm: 'SHA256' }),
    );
    expect(ChecksumAlgorithm).toBe('SHA256');
    await expectS3Error(
      local.s3.send(
        new UploadPartCommand({
          Bucket,
          Key,
          UploadId,
          PartNumber: 1,
          Body: 'x',
          ChecksumAlgorithm: 'CRC32',
        }),
      ),
      'InvalidRequest',
      400,
    );
    const part = await local.s3.send(
      new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: 1, Body: 'x', ChecksumAlgorithm: 'SHA256' }),
    );
    expect(part.ChecksumSHA256).toBeDefined();
    const done = await local.s3.send(
      new CompleteMultipartUploadCommand({
        Bucket,
        Key,
        UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag, ChecksumSHA256: part.ChecksumSHA256 }] },
      }),
    );
    expect(done.ChecksumSHA256).toMatch(/-1$/);
    expect(done.ChecksumType).toBe('COMPOSITE');
  });

  it('refuses a checksum type the algorithm does not have with 400 InvalidRequest', async () => {
    await expectS3Error(
      local.s3.send(
        new CreateMultipartUploadCommand({
          Bucket,
          Key: 'sum/bad',
          ChecksumAlgorithm: 'SHA1',
          ChecksumType: 'FULL_OBJECT',
        }),
      ),
      'InvalidRequest',
      400,
    );
  });
});

describe('buckets and routes', () => {
  it('DeleteBucket removes a bucket with uploads in progress but no objects, as S3 does', async () => {
    await local.s3.send(new CreateBucketCommand({ Bucket: 'pending-uploads' }));
    const { UploadId } = await local.s3.send(
      new CreateMultipartUploadCommand({ Bucket: 'pending-uploads', Key: 'k' }),
    );
    await local.s3.send(new DeleteBucketCommand({ Bucket: 'pending-uploads' }));
    await expectS3Error(
      local.s3.send(new ListPartsCommand({ Bucket: 'pending-uploads', Key: 'k', UploadId })),
      'NoSuchBucket',
      404,
    );
  });

  it('still answers 501 NotImplemented to a GetObject of one part', async () => {
    const res = await rawRequest(local.server, { method: 'GET', path: `/${Bucket}/sdk/small?partNumber=1` });
    expect([res.status, res.code]).toEqual([501, 'NotImplemented']);
  });
});
