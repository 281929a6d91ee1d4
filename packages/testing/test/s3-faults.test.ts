import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
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
