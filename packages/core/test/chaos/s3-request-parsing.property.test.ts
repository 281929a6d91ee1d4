import { connect } from 'node:net';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { type S3Server, startS3Server } from '@latch/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';

// The local S3 server is what the suite trusts to say "412" at the right time, so it must
// survive whatever arrives on its socket: random methods, paths, query strings, headers and
// bodies, sent as raw bytes. Each request gets an HTTP answer (or, when the framing itself is
// broken, a closed connection) — never a crash, a hang or a 500 — and the server keeps serving.

let server: S3Server;
beforeAll(async () => {
  server = await startS3Server({ bucket: 'fuzz' });
  // A bucket with an object in it cannot be deleted, so random DELETEs keep hitting a live bucket.
  const s3 = new S3Client(server.clientConfig());
  await s3.send(new PutObjectCommand({ Bucket: 'fuzz', Key: 'sentinel/keeps-the-bucket', Body: 'x' }));
  s3.destroy();
});
afterAll(async () => {
  await server?.stop();
});

/** How long a request may take before it counts as a hang. */
const HANG_MS = 5000;
// 500 means the server failed on the input (its own code says: a bug), 502-504 it never sends;
// 503 only comes from armed faults, and none are armed here.
const FORBIDDEN_STATUSES = new Set([500, 502, 503, 504]);

interface RawRequest {
  method: string;
  target: string;
  headers: Array<[string, string]>;
  body: Buffer;
  /** 'exact': Content-Length matches the body; 'chunked': valid chunked framing; 'broken': a lying Content-Length, then the client hangs up. */
  framing: 'exact' | 'chunked' | 'broken';
  brokenLength: number;
}

/** Sends raw bytes; resolves with the status line's code, or null if the server closed without answering. */
function send(request: RawRequest): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, server.host);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${HANG_MS} ms to ${request.method} ${request.target}`));
    }, HANG_MS);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined); // a reset is a close, judged below
    socket.on('close', () => {
      clearTimeout(timer);
      const head = Buffer.concat(chunks).toString('latin1');
      const match = /^HTTP\/1\.1 (\d{3}) /.exec(head);
      if (!match && head.length > 0)
        reject(new Error(`not an HTTP answer: ${JSON.stringify(head.slice(0, 80))}`));
      else resolve(match ? Number(match[1]) : null);
    });
    const lines = [
      `${request.method} ${request.target} HTTP/1.1`,
      `Host: ${server.host}:${server.port}`,
      'Connection: close',
    ];
    for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
    let body = request.body;
    if (request.framing === 'exact') lines.push(`Content-Length: ${body.length}`);
    if (request.framing === 'broken') lines.push(`Content-Length: ${body.length + 1 + request.brokenLength}`);
    if (request.framing === 'chunked') {
      lines.push('Transfer-Encoding: chunked');
      body = Buffer.concat([
        Buffer.from(`${body.length.toString(16)}\r\n`),
        body,
        Buffer.from('\r\n0\r\n\r\n'),
      ]);
      if (request.body.length === 0) body = Buffer.from('0\r\n\r\n');
    }
    socket.write(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]));
    // A request whose body never fully arrives: the client gives up and hangs up.
    if (request.framing === 'broken') socket.end();
  });
}

const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
});
const pathPiece = fc.oneof(
  fc.constantFrom('fuzz', 'fuzz/key', 'fuzz/a/b/../c', 'no-such-bucket', '', 'Fuzz', 'fu', 'a'.repeat(70)),
  printable.map((s) => s.replace(/[\s?#]/g, '')),
  fc.string({ unit: 'binary' }).map((s) => encodeURIComponent(s)),
  fc.constantFrom('%', '%ZZ', '%E0%A4', '%00', '%FF%FE', '%2F%2E%2E', '\u00e9', '%C3%A9'),
  fc.constant('k'.repeat(2000)),
);
// Mostly parameters the server implements, a few that select operations it does not.
const queryKeys = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'list-type',
      'prefix',
      'delimiter',
      'max-keys',
      'continuation-token',
      'start-after',
      'encoding-type',
      'marker',
      'delete',
      'location',
      'x-id',
      'response-content-type',
      'response-expires',
      'X-Amz-Signature',
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('uploads', 'uploadId', 'partNumber', 'versionId', 'tagging', 'acl'),
  },
);
const queryValue = fc.oneof(printable, fc.constantFrom('2', '0', '-1', '1001', 'url', 'NaN', '1e9', ''));
const query = fc
  .array(fc.tuple(queryKeys, fc.option(queryValue, { nil: undefined })), { maxLength: 4 })
  .map((pairs) => pairs.map(([k, v]) => (v === undefined ? k : `${k}=${encodeURIComponent(v)}`)).join('&'));
const headerNames = fc.constantFrom(
  'Content-Type',
  'Content-MD5',
  'Content-Encoding',
  'x-amz-content-sha256',
  'x-amz-decoded-content-length',
  'x-amz-trailer',
  'x-amz-checksum-crc32',
  'x-amz-checksum-crc32c',
  'x-amz-checksum-crc64nvme',
  'x-amz-checksum-sha1',
  'x-amz-checksum-sha256',
  'x-amz-checksum-mode',
  'x-amz-sdk-checksum-algorithm',
  'If-Match',
  'If-None-Match',
  'If-Modified-Since',
  'If-Unmodified-Since',
  'Range',
  'x-amz-copy-source',
  'x-amz-meta-note',
  'Cache-Control',
  'Expires',
);
const headerValue = fc.oneof(
  printable,
  fc.constantFrom(
    '*',
    '"d41d8cd98f00b204e9800998ecf8427e"',
    'UNSIGNED-PAYLOAD',
    'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
    'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
    'aws-chunked',
    'bytes=0-0',
    'bytes=5-1',
    'bytes=-0',
    'x-amz-checksum-crc32',
    'ENABLED',
    '1B2M2Y8AsgTpgAmY7PhCfg==',
    '-5',
    '99999999999999999999',
  ),
);
const awsChunkedBody = fc
  .tuple(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 3 }), fc.boolean(), fc.nat())
  .map(([parts, corrupt, at]) => {
    const framed = Buffer.concat([
      ...parts.map((p) =>
        Buffer.concat([
          Buffer.from(`${p.length.toString(16)};chunk-signature=${'0'.repeat(64)}\r\n`),
          Buffer.from(p),
          Buffer.from('\r\n'),
        ]),
      ),
      Buffer.from('0;chunk-signature=0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n'),
    ]);
    if (corrupt && framed.length > 0) framed[at % framed.length] = 0x41;
    return framed;
  });
const body = fc.oneof(
  fc.constant(Buffer.alloc(0)),
  fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)),
  printable.map((s) => Buffer.from(s)),
  fc
    .array(fc.tuple(printable, fc.option(fc.constantFrom('"etag"', '*'), { nil: undefined })), {
      maxLength: 3,
    })
    .map((objects) =>
      Buffer.from(
        `<Delete><Quiet>${objects.length % 2 === 0}</Quiet>${objects
          .map(([key, etag]) => `<Object><Key>${key}</Key>${etag ? `<ETag>${etag}</ETag>` : ''}</Object>`)
          .join('')}</Delete>`,
      ),
    ),
  fc
    .constantFrom(
      '<CreateBucketConfiguration><LocationConstraint>mars</LocationConstraint>',
      '<<<>',
      '<?xml version="1.0"?><Delete/>',
    )
    .map(Buffer.from),
  awsChunkedBody,
);
const request = (framing: fc.Arbitrary<RawRequest['framing']>): fc.Arbitrary<RawRequest> =>
  fc.record({
    method: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom('GET', 'PUT', 'PUT', 'POST', 'DELETE', 'HEAD') },
      {
        weight: 1,
        arbitrary: fc.oneof(fc.constantFrom('PATCH', 'OPTIONS'), fc.stringMatching(/^[A-Z]{1,8}$/)),
      },
    ),
    target: fc.oneof(
      // Mostly objects and listings of the real bucket, so requests get past routing.
      {
        weight: 4,
        arbitrary: fc
          .tuple(pathPiece, fc.option(query, { nil: undefined }))
          .map(([key, q]) => `/fuzz/${key}${q ? `?${q}` : ''}`),
      },
      { weight: 2, arbitrary: query.map((q) => `/fuzz?${q}`) },
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.array(pathPiece, { maxLength: 3 }), fc.option(query, { nil: undefined }))
          .map(([pieces, q]) => `/${pieces.join('/')}${q === undefined ? '' : `?${q}`}`),
      },
    ),
    headers: fc.array(fc.tuple(headerNames, headerValue), { maxLength: 5 }),
    body,
    framing,
    brokenLength: fc.nat({ max: 1000 }),
  });

test('well-framed random requests each get an HTTP answer, never a 500', async () => {
  await fc.assert(
    fc.asyncProperty(request(fc.constantFrom('exact', 'chunked')), async (r) => {
      const status = await send(r);
      expect(status, `no answer to ${r.method} ${r.target}`).not.toBeNull();
      expect(FORBIDDEN_STATUSES.has(status!), `${status} for ${r.method} ${r.target}`).toBe(false);
    }),
    { numRuns: 300 },
  );
});

test('requests whose body never fully arrives are dropped without a crash or a hang', async () => {
  await fc.assert(
    fc.asyncProperty(request(fc.constant('broken')), async (r) => {
      const status = await send(r);
      if (status !== null)
        expect(FORBIDDEN_STATUSES.has(status), `${status} for ${r.method} ${r.target}`).toBe(false);
    }),
    { numRuns: 100 },
  );
});

test('after the random requests the server still serves real clients', async () => {
  const s3 = new S3Client(server.clientConfig());
  try {
    // A bucket of its own: the random requests may have deleted or filled anything else.
    await s3.send(new CreateBucketCommand({ Bucket: 'after-fuzz' }));
    await s3.send(
      new PutObjectCommand({ Bucket: 'after-fuzz', Key: 'lock', Body: 'still here', IfNoneMatch: '*' }),
    );
    const got = await s3.send(new GetObjectCommand({ Bucket: 'after-fuzz', Key: 'lock' }));
    expect(await got.Body?.transformToString()).toBe('still here');
  } finally {
    s3.destroy();
  }
});
