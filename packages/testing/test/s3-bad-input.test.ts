import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { crc32 } from 'node:zlib';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import {
  bodyText,
  expectS3Error,
  type RawRequest,
  type RawResponse,
  rawRequest,
  useS3Server,
} from './s3-helpers.js';

const Bucket = 'strict';
const local = useS3Server({ bucket: Bucket, maxObjectSize: 64 * 1024 });

const md5b64 = (body: string | Buffer) => createHash('md5').update(body).digest('base64');
const crc32b64 = (body: string | Buffer) => {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(crc32(body));
  return out.toString('base64');
};

async function send(req: RawRequest): Promise<RawResponse> {
  const res = await rawRequest(local.server, req);
  // Every answer, error or not, carries a request id like S3's.
  expect(res.headers['x-amz-request-id']).toBeTruthy();
  return res;
}

async function expectError(req: RawRequest, status: number, code: string | undefined): Promise<RawResponse> {
  const res = await send(req);
  expect({ status: res.status, code: res.code }).toEqual({ status, code });
  return res;
}

/** Writes raw bytes on a socket and returns whatever comes back before the server closes or 3 s pass. */
function rawSocket(payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(local.server.port, local.server.host);
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(data);
    }, 3000);
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
      if (/\r\n\r\n/.test(data)) {
        clearTimeout(timer);
        socket.destroy();
        resolve(data);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(data);
    });
    socket.write(payload);
  });
}

function deleteBody(xml: string): RawRequest {
  return {
    method: 'POST',
    path: `/${Bucket}?delete`,
    headers: { 'content-md5': md5b64(xml), 'content-type': 'application/xml' },
    body: xml,
  };
}

describe('DeleteObjects bodies', () => {
  it.each([
    ['not XML at all', 'hello'],
    ['an unclosed element', '<Delete><Object><Key>a</Key></Object>'],
    ['mismatched tags', '<Delete><Object><Key>a</Object></Key></Delete>'],
    ['the wrong root element', '<Remove><Object><Key>a</Key></Object></Remove>'],
    ['no Object', '<Delete><Quiet>true</Quiet></Delete>'],
    ['an Object without Key', '<Delete><Object><VersionId>null</VersionId></Object></Delete>'],
    ['a DOCTYPE', '<!DOCTYPE d [<!ENTITY x "y">]><Delete><Object><Key>&x;</Key></Object></Delete>'],
    ['an unknown entity', '<Delete><Object><Key>&bogus;</Key></Object></Delete>'],
    ['trailing garbage', '<Delete><Object><Key>a</Key></Object></Delete><Delete/>'],
    ['more than 1000 keys', `<Delete>${'<Object><Key>k</Key></Object>'.repeat(1001)}</Delete>`],
  ])('answers 400 MalformedXML for %s', async (_what, xml) => {
    await expectError(deleteBody(xml), 400, 'MalformedXML');
  });

  it('answers 400 MalformedXML for a body that is not UTF-8', async () => {
    const body = Buffer.concat([
      Buffer.from('<Delete><Object><Key>'),
      Buffer.from([0xff]),
      Buffer.from('</Key></Object></Delete>'),
    ]);
    await expectError(
      { method: 'POST', path: `/${Bucket}?delete`, headers: { 'content-md5': md5b64(body) }, body },
      400,
      'MalformedXML',
    );
  });

  it('accepts namespaces, entities, CDATA and comments', async () => {
    await local.s3.send(new PutObjectCommand({ Bucket, Key: 'x&y', Body: 'a' }));
    await local.s3.send(new PutObjectCommand({ Bucket, Key: 'cdata<', Body: 'a' }));
    const xml =
      '<?xml version="1.0"?><!-- c --><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
      '<Object><Key>x&amp;y</Key></Object><Object><Key><![CDATA[cdata<]]></Key></Object></Delete>';
    const res = await expectError(deleteBody(xml), 200, undefined);
    expect(res.body).toContain('<Deleted><Key>x&amp;y</Key></Deleted>');
    expect(res.body).toContain('<Deleted><Key>cdata&lt;</Key></Deleted>');
  });

  it('reports an empty or over-long key as a per-key error', async () => {
    const long = 'k'.repeat(1025);
    const res = await expectError(
      deleteBody(`<Delete><Object><Key></Key></Object><Object><Key>${long}</Key></Object></Delete>`),
      200,
      'InvalidArgument',
    );
    expect(res.body).toContain('<Code>KeyTooLongError</Code>');
  });

  it('requires Content-MD5 or a checksum header', async () => {
    const xml = '<Delete><Object><Key>a</Key></Object></Delete>';
    await expectError({ method: 'POST', path: `/${Bucket}?delete`, body: xml }, 400, 'InvalidRequest');
    await expectError(
      { method: 'POST', path: `/${Bucket}?delete`, headers: { 'content-md5': md5b64('other') }, body: xml },
      400,
      'BadDigest',
    );
  });
});

describe('unknown buckets', () => {
  it.each([
    ['GET', '/no-such-bucket/key'],
    ['PUT', '/no-such-bucket/key'],
    ['DELETE', '/no-such-bucket/key'],
    ['GET', '/no-such-bucket?list-type=2'],
    ['DELETE', '/no-such-bucket'],
  ])('%s %s answers 404 NoSuchBucket', async (method, path) => {
    const res = await expectError(
      {
        method,
        path,
        headers: method === 'PUT' ? { 'content-length': 1 } : {},
        ...(method === 'PUT' ? { body: 'x' } : {}),
      },
      404,
      'NoSuchBucket',
    );
    expect(res.body).toContain('<BucketName>no-such-bucket</BucketName>');
  });

  it('HEAD on an unknown bucket is a bare 404', async () => {
    const res = await send({ method: 'HEAD', path: '/no-such-bucket' });
    expect(res.status).toBe(404);
    expect(res.body).toBe('');
  });

  it('rejects invalid bucket names on creation', async () => {
    for (const name of ['UPPER', 'a', 'under_score', '-dash', 'xn--punycode', 'x'.repeat(64)]) {
      await expectError({ method: 'PUT', path: `/${name}` }, 400, 'InvalidBucketName');
    }
  });

  it('answers MalformedXML to a broken CreateBucketConfiguration', async () => {
    await expectError(
      { method: 'PUT', path: '/fresh-bucket', body: '<CreateBucketConfiguration>' },
      400,
      'MalformedXML',
    );
  });
});

describe('keys', () => {
  it.each([
    ['invalid UTF-8', `/${Bucket}/%FF`],
    ['a truncated UTF-8 sequence', `/${Bucket}/abc%C3`],
    ['an overlong encoding', `/${Bucket}/%C0%AF`],
    ['a malformed escape', `/${Bucket}/%G1`],
    ['a dangling %', `/${Bucket}/abc%`],
    ['a key without a bucket', '//key'],
    ['invalid UTF-8 in the bucket name', '/%FF/key'],
  ])('answers 400 InvalidURI for %s', async (_what, path) => {
    await expectError({ method: 'GET', path }, 400, 'InvalidURI');
  });

  it('answers 400 KeyTooLongError above 1024 bytes of UTF-8, accepts exactly 1024', async () => {
    await expectError({ method: 'GET', path: `/${Bucket}/${'a'.repeat(1025)}` }, 400, 'KeyTooLongError');
    // 513 two-byte characters: fewer than 1024 characters, but 1026 bytes.
    await expectS3Error(
      local.s3.send(new PutObjectCommand({ Bucket, Key: 'é'.repeat(513), Body: 'x' })),
      'KeyTooLongError',
      400,
    );
    const Key = 'b'.repeat(1024);
    await local.s3.send(new PutObjectCommand({ Bucket, Key, Body: 'max' }));
    expect(await bodyText((await local.s3.send(new GetObjectCommand({ Bucket, Key }))).Body)).toBe('max');
  });
});

describe('conditional headers', () => {
  it('treats If-Match values that are not entity tags as non-matching (412 / 404)', async () => {
    await local.s3.send(new PutObjectCommand({ Bucket, Key: 'cond', Body: 'x' }));
    for (const value of ['garbage', '', '"unterminated', 'W/', ',,,']) {
      await expectError(
        {
          method: 'PUT',
          path: `/${Bucket}/cond`,
          headers: { 'if-match': value, 'content-length': 1 },
          body: 'y',
        },
        412,
        'PreconditionFailed',
      );
    }
    await expectError(
      {
        method: 'PUT',
        path: `/${Bucket}/absent`,
        headers: { 'if-match': 'garbage', 'content-length': 1 },
        body: 'y',
      },
      404,
      'NoSuchKey',
    );
    await expectError(
      { method: 'GET', path: `/${Bucket}/cond`, headers: { 'if-match': 'garbage' } },
      412,
      'PreconditionFailed',
    );
    await expectError(
      { method: 'DELETE', path: `/${Bucket}/cond`, headers: { 'if-match': 'garbage' } },
      412,
      'PreconditionFailed',
    );
    expect(await bodyText((await local.s3.send(new GetObjectCommand({ Bucket, Key: 'cond' }))).Body)).toBe(
      'x',
    );
  });

  it('ignores unparseable dates in If-Modified-Since / If-Unmodified-Since', async () => {
    await local.s3.send(new PutObjectCommand({ Bucket, Key: 'dated', Body: 'x' }));
    const res = await send({
      method: 'GET',
      path: `/${Bucket}/dated`,
      headers: { 'if-modified-since': 'yesterday-ish', 'if-unmodified-since': 'not a date' },
    });
    expect(res.status).toBe(200);
  });

  it('answers 501 NotImplemented to conditions S3 does not support on writes', async () => {
    await expectError(
      { method: 'DELETE', path: `/${Bucket}/cond`, headers: { 'if-none-match': '*' } },
      501,
      'NotImplemented',
    );
    await expectError(
      {
        method: 'PUT',
        path: `/${Bucket}/cond`,
        headers: { 'if-unmodified-since': new Date().toUTCString(), 'content-length': 1 },
        body: 'y',
      },
      501,
      'NotImplemented',
    );
  });
});

describe('request bodies', () => {
  const chunkedHeaders = (decodedLength: number, extra: Record<string, string> = {}) => ({
    'content-encoding': 'aws-chunked',
    'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
    'x-amz-decoded-content-length': decodedLength,
    ...extra,
  });

  it('decodes signed aws-chunked bodies (chunk signatures are not checked)', async () => {
    const sig = 'a'.repeat(64);
    const body = `5;chunk-signature=${sig}\r\nhello\r\n6;chunk-signature=${sig}\r\n world\r\n0;chunk-signature=${sig}\r\n\r\n`;
    const res = await send({
      method: 'PUT',
      path: `/${Bucket}/signed-chunks`,
      headers: {
        'content-encoding': 'aws-chunked',
        'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
        'x-amz-decoded-content-length': 11,
      },
      body,
    });
    expect(res.status).toBe(200);
    expect(
      await bodyText((await local.s3.send(new GetObjectCommand({ Bucket, Key: 'signed-chunks' }))).Body),
    ).toBe('hello world');
  });

  it('verifies a trailing checksum', async () => {
    const good = `5\r\nhello\r\n0\r\nx-amz-checksum-crc32:${crc32b64('hello')}\r\n\r\n`;
    const headers = chunkedHeaders(5, { 'x-amz-trailer': 'x-amz-checksum-crc32' });
    expect((await send({ method: 'PUT', path: `/${Bucket}/trailer`, headers, body: good })).status).toBe(200);
    const bad = `5\r\nhello\r\n0\r\nx-amz-checksum-crc32:${crc32b64('HELLO')}\r\n\r\n`;
    await expectError({ method: 'PUT', path: `/${Bucket}/trailer`, headers, body: bad }, 400, 'BadDigest');
    const missing = '5\r\nhello\r\n0\r\n\r\n';
    await expectError(
      { method: 'PUT', path: `/${Bucket}/trailer`, headers, body: missing },
      400,
      'InvalidRequest',
    );
  });

  it.each([
    ['a non-hex chunk size', 'zz\r\nhello\r\n0\r\n\r\n', 'InvalidRequest'],
    ['chunk data longer than announced', '3\r\nhello\r\n0\r\n\r\n', 'InvalidRequest'],
    ['a bad trailer line', '5\r\nhello\r\n0\r\nno-colon-here\r\n\r\n', 'InvalidRequest'],
    ['data after the final chunk', '5\r\nhello\r\n0\r\n\r\nextra', 'InvalidRequest'],
    ['a body cut off mid-chunk', '5\r\nhel', 'IncompleteBody'],
    ['no final chunk', '5\r\nhello\r\n', 'IncompleteBody'],
    ['fewer bytes than x-amz-decoded-content-length', '4\r\nhell\r\n0\r\n\r\n', 'IncompleteBody'],
  ])('answers 400 to an aws-chunked body with %s', async (_what, body, code) => {
    await expectError(
      { method: 'PUT', path: `/${Bucket}/chunky`, headers: chunkedHeaders(5), body },
      400,
      code,
    );
  });

  it('requires x-amz-decoded-content-length on aws-chunked bodies', async () => {
    await expectError(
      {
        method: 'PUT',
        path: `/${Bucket}/chunky`,
        headers: {
          'content-encoding': 'aws-chunked',
          'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
        },
        body: '0\r\n\r\n',
      },
      411,
      'MissingContentLength',
    );
  });

  it('checks x-amz-content-sha256, Content-MD5 and x-amz-checksum-* against the body', async () => {
    const put = (headers: Record<string, string>) => ({
      method: 'PUT',
      path: `/${Bucket}/digest`,
      headers: { 'content-length': '5', ...headers },
      body: 'hello',
    });
    const sha = createHash('sha256').update('hello').digest('hex');
    expect((await send(put({ 'x-amz-content-sha256': sha }))).status).toBe(200);
    await expectError(
      put({ 'x-amz-content-sha256': sha.replace(/^./, '0') }),
      400,
      'XAmzContentSHA256Mismatch',
    );
    await expectError(put({ 'x-amz-content-sha256': 'whatever' }), 400, 'InvalidArgument');
    expect((await send(put({ 'content-md5': md5b64('hello') }))).status).toBe(200);
    await expectError(put({ 'content-md5': md5b64('world') }), 400, 'BadDigest');
    await expectError(put({ 'content-md5': 'bm90LW1kNQ==' }), 400, 'InvalidDigest');
    await expectError(put({ 'x-amz-checksum-crc32': crc32b64('world') }), 400, 'BadDigest');
    await expectError(
      put({ 'x-amz-checksum-crc32': crc32b64('hello'), 'x-amz-checksum-sha1': 'AAAA' }),
      400,
      'InvalidRequest',
    );
    await expectError(put({ 'x-amz-sdk-checksum-algorithm': 'CRC32' }), 400, 'InvalidRequest');
    await expectError(put({ 'x-amz-sdk-checksum-algorithm': 'MD4' }), 400, 'InvalidRequest');
  });

  it('answers 400 EntityTooLarge above maxObjectSize, plain or aws-chunked', async () => {
    const big = 'x'.repeat(64 * 1024 + 1);
    await expectError(
      { method: 'PUT', path: `/${Bucket}/big`, headers: { 'content-length': big.length }, body: big },
      400,
      'EntityTooLarge',
    );
    await expectError(
      {
        method: 'PUT',
        path: `/${Bucket}/big`,
        headers: chunkedHeaders(big.length),
        body: `${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`,
      },
      400,
      'EntityTooLarge',
    );
    // Exactly at the limit is fine.
    const max = 'y'.repeat(64 * 1024);
    expect(
      (
        await send({
          method: 'PUT',
          path: `/${Bucket}/big`,
          headers: { 'content-length': max.length },
          body: max,
        })
      ).status,
    ).toBe(200);
  });

  it('answers 411 MissingContentLength to a PUT without a length', async () => {
    const answer = await rawSocket(
      `PUT /${Bucket}/no-length HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 411 /);
    expect(answer).toContain('x-amz-request-id');
  });
});

describe('unsupported requests', () => {
  it.each([
    ['GET', `/${Bucket}?versioning`],
    ['PUT', `/${Bucket}?tagging`],
    ['GET', `/${Bucket}/key?acl`],
    ['PUT', `/${Bucket}/key?uploads`],
    ['GET', `/${Bucket}/key?partNumber=1`],
    ['POST', `/${Bucket}?uploads`],
    ['PATCH', `/${Bucket}/key`],
    ['POST', '/'],
  ])('%s %s answers 501 NotImplemented', async (method, path) => {
    await expectError({ method, path }, 501, 'NotImplemented');
  });

  it('rejects bad listing parameters with 400 InvalidArgument', async () => {
    await expectError({ method: 'GET', path: `/${Bucket}?list-type=2&max-keys=-1` }, 400, 'InvalidArgument');
    await expectError({ method: 'GET', path: `/${Bucket}?list-type=2&max-keys=ten` }, 400, 'InvalidArgument');
    await expectError({ method: 'GET', path: `/${Bucket}?list-type=3` }, 400, 'InvalidArgument');
  });

  it('answers a response header Node cannot send with 500 InternalError instead of dropping the connection', async () => {
    await local.s3.send(new PutObjectCommand({ Bucket, Key: 'override', Body: 'x' }));
    await expectError(
      { method: 'GET', path: `/${Bucket}/override?response-content-type=%E2%82%AC` },
      500,
      'InternalError',
    );
    const ok = await send({ method: 'GET', path: `/${Bucket}/override?response-content-type=text%2Fplain` });
    expect(ok.headers['content-type']).toBe('text/plain');
  });

  it('answers garbage that is not HTTP with 400 and keeps serving', async () => {
    const answer = await rawSocket('THIS IS NOT HTTP\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect((await send({ method: 'GET', path: `/${Bucket}?list-type=2` })).status).toBe(200);
  });
});
