import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startS3Server } from '../src/s3/server.js';
import { bodyText, expectS3Error, rawRequest, s3Client, sdkError, useS3Server } from './s3-helpers.js';

const Bucket = 'faulty';
const local = useS3Server({ bucket: Bucket });
/** No SDK retries: each call is exactly one HTTP request, so a fault's effect is seen directly. */
let once: S3Client;

beforeAll(() => {
  once = s3Client(local.server, { maxAttempts: 1 });
});

afterEach(() => {
  local.server.faults.clear();
  local.server.resetRequestLog();
});

afterAll(() => {
  once.destroy();
});

const put = (client: S3Client, Key: string, Body: string, IfNoneMatch?: string) =>
  client.send(new PutObjectCommand({ Bucket, Key, Body, ...(IfNoneMatch ? { IfNoneMatch } : {}) }));
const exists = async (Key: string) => {
  const err = await local.s3.send(new HeadObjectCommand({ Bucket, Key })).then(
    () => undefined,
    (e: Error) => e,
  );
  if (err && err.name !== 'NotFound') throw err;
  return err === undefined;
};

describe('latency', () => {
  it('delays matching requests by at least the given time', async () => {
    const fault = local.server.faults.latency({ op: 'GetObject' }, 150);
    await put(local.s3, 'slow', 'x');
    const started = performance.now();
    await local.s3.send(new GetObjectCommand({ Bucket, Key: 'slow' }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(fault.hits).toBe(1);
    expect(fault.active).toBe(true);
  });

  it('can delay the answer after the write was applied', async () => {
    const fault = local.server.faults.latency({ op: 'PutObject', key: 'late-answer' }, 300, {
      afterApply: true,
    });
    const pending = put(local.s3, 'late-answer', 'x');
    // The object becomes visible before the PUT's own response arrives.
    for (let i = 0; i < 100 && !(await exists('late-answer')); i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(await exists('late-answer')).toBe(true);
    expect(fault.hits).toBe(1);
    await pending;
  });

  it('does not touch requests the matcher excludes', async () => {
    const fault = local.server.faults.latency({ op: 'PutObject', key: /^only\// }, 5_000);
    await put(local.s3, 'elsewhere', 'x');
    await local.s3.send(new GetObjectCommand({ Bucket, Key: 'elsewhere' }));
    expect(fault.hits).toBe(0);
  });
});

describe('error responses', () => {
  it('SlowDown: 503 reaches the caller as SlowDown and nothing is written', async () => {
    const fault = local.server.faults.slowDown({ op: 'PutObject', key: 'throttled' });
    await expectS3Error(put(once, 'throttled', 'x'), 'SlowDown', 503);
    expect(fault.hits).toBe(1);
    expect(await exists('throttled')).toBe(false);
  });

  it('server errors are retried by the SDK, which succeeds once the fault is used up', async () => {
    // InternalError rather than SlowDown: the SDK backs off much longer after throttling errors.
    const fault = local.server.faults.internalError({ op: 'PutObject', key: 'retried', times: 2 });
    await put(local.s3, 'retried', 'x'); // default client: up to 3 attempts
    expect(fault.hits).toBe(2);
    expect(fault.active).toBe(false);
    expect(
      local.server.requestLog.filter((r) => r.op === 'PutObject').map((r) => [r.status, r.fault]),
    ).toEqual([
      [500, 'internalError'],
      [500, 'internalError'],
      [200, undefined],
    ]);
  });

  it('InternalError: 500 with an S3 error document', async () => {
    const fault = local.server.faults.internalError({ op: 'GetObject', times: 1 });
    await put(local.s3, 'broken', 'x');
    await expectS3Error(once.send(new GetObjectCommand({ Bucket, Key: 'broken' })), 'InternalError', 500);
    expect(fault.hits).toBe(1);
    // times: 1 — the next request is served normally.
    expect(await bodyText((await once.send(new GetObjectCommand({ Bucket, Key: 'broken' }))).Body)).toBe('x');
  });

  it('HEAD errors come without a body', async () => {
    local.server.faults.slowDown({ op: 'HeadBucket' });
    const res = await rawRequest(local.server, { method: 'HEAD', path: `/${Bucket}` });
    expect(res.status).toBe(503);
    expect(res.body).toBe('');
  });
});

describe('connection faults', () => {
  it('resetBeforeApply: the client gets a network error and the object is not written', async () => {
    const fault = local.server.faults.resetBeforeApply({ op: 'PutObject', key: 'never' });
    const err = await sdkError(put(once, 'never', 'x'));
    expect(err.$metadata?.httpStatusCode).toBeUndefined();
    expect((err as Error & { code?: string }).code).toBe('ECONNRESET');
    expect(fault.hits).toBe(1);
    expect(await exists('never')).toBe(false);
    expect(local.server.requestLog.find((r) => r.key === 'never')).toMatchObject({
      status: 0,
      fault: 'resetBeforeApply',
    });
  });

  it('dropResponseAfterApply: the client gets a network error but the object IS written', async () => {
    const fault = local.server.faults.dropResponseAfterApply({ op: 'PutObject', key: 'ghost' });
    const err = await sdkError(put(once, 'ghost', 'applied'));
    expect(err.$metadata?.httpStatusCode).toBeUndefined();
    expect((err as Error & { code?: string }).code).toBe('ECONNRESET');
    expect(fault.hits).toBe(1);
    expect(await bodyText((await local.s3.send(new GetObjectCommand({ Bucket, Key: 'ghost' }))).Body)).toBe(
      'applied',
    );
    expect(local.server.requestLog.find((r) => r.key === 'ghost')).toMatchObject({
      status: 200,
      fault: 'dropResponseAfterApply',
    });
  });

  it('a retried create-only put after a lost response sees its own write as 412', async () => {
    // The ambiguity lock code must handle: the first attempt won, the SDK's retry is told it lost.
    local.server.faults.dropResponseAfterApply({ op: 'PutObject', key: 'ambiguous', times: 1 });
    await expectS3Error(put(local.s3, 'ambiguous', 'mine', '*'), 'PreconditionFailed', 412);
    expect(
      await bodyText((await local.s3.send(new GetObjectCommand({ Bucket, Key: 'ambiguous' }))).Body),
    ).toBe('mine');
  });
});

describe('applied late, after the client gave up', () => {
  /** The object's body, or the error's name (NoSuchKey). */
  const read = (Key: string) =>
    local.s3.send(new GetObjectCommand({ Bucket, Key })).then(
      (res) => bodyText(res.Body),
      (e: Error) => e.name,
    );
  /** Polls `read` until it returns `want` (or gives up after a few seconds and returns what it saw). */
  const eventually = async (Key: string, want: string) => {
    let seen = await read(Key);
    for (let i = 0; i < 300 && seen !== want; i++) {
      await new Promise((r) => setTimeout(r, 10));
      seen = await read(Key);
    }
    return seen;
  };

  it('applyLate: the client gets a network error, a read right after sees the old state, the write lands later', async () => {
    await put(local.s3, 'late', 'old');
    const fault = local.server.faults.applyLate({ op: 'PutObject', key: 'late', times: 1 }, { delayMs: 300 });
    const err = await sdkError(put(once, 'late', 'new'));
    expect(err.$metadata?.httpStatusCode).toBeUndefined();
    expect((err as Error & { code?: string }).code).toBe('ECONNRESET');
    expect(fault.hits).toBe(1);
    // The client re-reads at once: nothing changed, as if its write had never been sent.
    expect(await read('late')).toBe('old');
    expect(local.server.requestLog.some((r) => r.fault === 'applyLate')).toBe(false);
    // ...and then the write lands.
    expect(await eventually('late', 'new')).toBe('new');
    expect(local.server.requestLog.filter((r) => r.key === 'late' && r.op === 'PutObject')).toEqual([
      { op: 'PutObject', method: 'PUT', bucket: Bucket, key: 'late', status: 200 },
      { op: 'PutObject', method: 'PUT', bucket: Bucket, key: 'late', status: 200, fault: 'applyLate' },
    ]);
  });

  it('a late conditional write is judged against the state when it lands, not when it was sent', async () => {
    const v1 = await put(local.s3, 'late-cas', 'v1');
    local.server.faults.applyLate({ op: 'PutObject', key: 'late-cas', times: 1 }, { delayMs: 300 });
    await sdkError(
      once.send(new PutObjectCommand({ Bucket, Key: 'late-cas', Body: 'late', IfMatch: v1.ETag })),
    );
    // Someone else replaces the object before the late write lands: the late write must lose.
    await put(local.s3, 'late-cas', 'v2');
    for (let i = 0; i < 300 && !local.server.requestLog.some((r) => r.fault === 'applyLate'); i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(local.server.requestLog.find((r) => r.fault === 'applyLate')).toMatchObject({ status: 412 });
    expect(await read('late-cas')).toBe('v2');
  });

  it("the SDK's retries are new requests: with times: 3 every attempt fails and every one lands late", async () => {
    // The default client makes three attempts. The first create-only put lands; the retries then
    // find the object there, as they would on S3.
    local.server.faults.applyLate({ op: 'PutObject', key: 'late-retried', times: 3 }, { delayMs: 1000 });
    const err = await sdkError(put(local.s3, 'late-retried', 'mine', '*'));
    expect((err as Error & { code?: string }).code).toBe('ECONNRESET');
    expect(await read('late-retried')).toBe('NoSuchKey');
    expect(await eventually('late-retried', 'mine')).toBe('mine');
    for (let i = 0; i < 300 && local.server.requestLog.filter((r) => r.fault === 'applyLate').length < 3; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(local.server.requestLog.filter((r) => r.fault === 'applyLate').map((r) => r.status)).toEqual([
      200, 412, 412,
    ]);
  });

  it('a late request still waiting when the server stops is never applied', async () => {
    const server = await startS3Server({ bucket: Bucket });
    const client = s3Client(server, { maxAttempts: 1 });
    try {
      server.faults.applyLate({ op: 'PutObject' }, { delayMs: 60_000 });
      await sdkError(put(client, 'never-late', 'x'));
      await server.stop();
      expect(server.requestLog).toEqual([
        { op: 'PutObject', method: 'PUT', bucket: Bucket, key: 'never-late', status: 0, fault: 'applyLate' },
      ]);
    } finally {
      client.destroy();
      await server.stop();
    }
  });
});

describe('fault handles', () => {
  it('remove() and clear() stop faults; times retires them', async () => {
    const a = local.server.faults.slowDown({ op: 'GetObject' });
    const b = local.server.faults.internalError({ op: 'GetObject' });
    await put(local.s3, 'handles', 'x');
    await expectS3Error(once.send(new GetObjectCommand({ Bucket, Key: 'handles' })), 'SlowDown', 503);
    a.remove();
    expect(a.active).toBe(false);
    await expectS3Error(once.send(new GetObjectCommand({ Bucket, Key: 'handles' })), 'InternalError', 500);
    local.server.faults.clear();
    expect(b.active).toBe(false);
    await once.send(new GetObjectCommand({ Bucket, Key: 'handles' }));
    expect([a.hits, b.hits]).toEqual([1, 1]);
  });

  it('matches on a list of operations and on the bucket', async () => {
    const fault = local.server.faults.slowDown({ op: ['GetObject', 'HeadObject'], bucket: 'other-bucket' });
    await put(local.s3, 'bucket-match', 'x');
    await once.send(new GetObjectCommand({ Bucket, Key: 'bucket-match' }));
    expect(fault.hits).toBe(0);
  });

  it('rejects nonsensical settings', () => {
    expect(() => local.server.faults.latency({}, -1)).toThrow(RangeError);
    expect(() => local.server.faults.slowDown({ times: 0 })).toThrow(RangeError);
    expect(() => local.server.faults.slowDown({ times: 1.5 })).toThrow(RangeError);
    expect(() => local.server.faults.applyLate({}, { delayMs: -1 })).toThrow(RangeError);
    expect(() => local.server.faults.applyLate({}, { delayMs: Number.NaN })).toThrow(RangeError);
  });
});

describe('request log', () => {
  it('records operation, bucket, key and status of each request', async () => {
    await put(local.s3, 'logged', 'x');
    await local.s3.send(new GetObjectCommand({ Bucket, Key: 'logged' }));
    await expectS3Error(local.s3.send(new GetObjectCommand({ Bucket, Key: 'unlogged' })), 'NoSuchKey', 404);
    expect(local.server.requestLog).toEqual([
      { op: 'PutObject', method: 'PUT', bucket: Bucket, key: 'logged', status: 200 },
      { op: 'GetObject', method: 'GET', bucket: Bucket, key: 'logged', status: 200 },
      { op: 'GetObject', method: 'GET', bucket: Bucket, key: 'unlogged', status: 404 },
    ]);
    local.server.resetRequestLog();
    expect(local.server.requestLog).toEqual([]);
  });
});

describe('robustness', () => {
  it('turns an exception inside request handling into 500 InternalError and keeps serving', async () => {
    // A key matcher whose test() throws stands in for a bug anywhere in the request path.
    class Exploding extends RegExp {
      override test(): boolean {
        throw new Error('boom');
      }
    }
    local.server.faults.slowDown({ key: new Exploding('x') });
    const res = await rawRequest(local.server, { method: 'GET', path: `/${Bucket}/anything` });
    expect(res.status).toBe(500);
    expect(res.code).toBe('InternalError');
    local.server.faults.clear();
    await put(local.s3, 'still-alive', 'x');
    expect(await exists('still-alive')).toBe(true);
  });
});
