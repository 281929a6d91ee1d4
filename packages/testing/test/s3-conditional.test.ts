import { request } from 'node:http';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type S3Server, startS3Server } from '../src/s3/server.js';
import { bodyText, expectS3Error, rawRequest, s3Client, sdkError, useS3Server } from './s3-helpers.js';

const Bucket = 'cond';
const local = useS3Server({ bucket: Bucket });

async function put(Key: string, Body: string, extra: { IfMatch?: string; IfNoneMatch?: string } = {}) {
  return local.s3.send(new PutObjectCommand({ Bucket, Key, Body, ...extra }));
}

async function read(Key: string): Promise<string> {
  return bodyText((await local.s3.send(new GetObjectCommand({ Bucket, Key }))).Body);
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(condition()).toBe(true);
}

describe('PutObject If-None-Match', () => {
  it('creates a new key and refuses an existing one with 412 PreconditionFailed', async () => {
    const created = await put('inm/new', 'first', { IfNoneMatch: '*' });
    expect(created.$metadata.httpStatusCode).toBe(200);
    await expectS3Error(put('inm/new', 'second', { IfNoneMatch: '*' }), 'PreconditionFailed', 412);
    expect(await read('inm/new')).toBe('first');
  });

  it('can create a key again once it was deleted', async () => {
    await put('inm/recreate', 'one', { IfNoneMatch: '*' });
    await local.s3.send(new DeleteObjectCommand({ Bucket, Key: 'inm/recreate' }));
    await put('inm/recreate', 'two', { IfNoneMatch: '*' });
    expect(await read('inm/recreate')).toBe('two');
  });

  it('answers 501 NotImplemented for any value other than *', async () => {
    const { ETag } = await put('inm/etag', 'x');
    await expectS3Error(put('inm/etag', 'y', { IfNoneMatch: ETag }), 'NotImplemented', 501);
    await expectS3Error(put('inm/other', 'y', { IfNoneMatch: '"abc"' }), 'NotImplemented', 501);
    expect(await read('inm/etag')).toBe('x');
  });

  it('names the failed condition in the error document', async () => {
    await put('inm/doc', 'x');
    const res = await rawRequest(local.server, {
      method: 'PUT',
      path: `/${Bucket}/inm/doc`,
      headers: { 'if-none-match': '*', 'content-length': 1 },
      body: 'y',
    });
    expect(res.status).toBe(412);
    expect(res.code).toBe('PreconditionFailed');
    expect(res.body).toContain('<Condition>If-None-Match</Condition>');
  });
});

describe('PutObject If-Match', () => {
  it('replaces the object when the ETag matches and returns the new ETag', async () => {
    const v1 = await put('im/match', 'v1');
    const v2 = await put('im/match', 'v2', { IfMatch: v1.ETag });
    expect(v2.ETag).not.toBe(v1.ETag);
    expect(await read('im/match')).toBe('v2');
  });

  it('answers 412 on a different ETag and leaves the object alone', async () => {
    const v1 = await put('im/mismatch', 'v1');
    await put('im/mismatch', 'v2');
    await expectS3Error(put('im/mismatch', 'v3', { IfMatch: v1.ETag }), 'PreconditionFailed', 412);
    expect(await read('im/mismatch')).toBe('v2');
  });

  it('answers 404 NoSuchKey when there is no object', async () => {
    await expectS3Error(
      put('im/absent', 'v1', { IfMatch: '"d41d8cd98f00b204e9800998ecf8427e"' }),
      'NoSuchKey',
      404,
    );
    await expectS3Error(local.s3.send(new HeadObjectCommand({ Bucket, Key: 'im/absent' })), 'NotFound', 404);
  });

  it('accepts the ETag without quotes, as S3 does', async () => {
    const v1 = await put('im/unquoted', 'v1');
    const res = await rawRequest(local.server, {
      method: 'PUT',
      path: `/${Bucket}/im/unquoted`,
      headers: { 'if-match': v1.ETag!.replaceAll('"', ''), 'content-length': 2 },
      body: 'v2',
    });
    expect(res.status).toBe(200);
    expect(await read('im/unquoted')).toBe('v2');
  });
});

describe('DeleteObject If-Match', () => {
  it('deletes when the ETag matches', async () => {
    const { ETag } = await put('del/match', 'x');
    const res = await local.s3.send(new DeleteObjectCommand({ Bucket, Key: 'del/match', IfMatch: ETag }));
    expect(res.$metadata.httpStatusCode).toBe(204);
    await expectS3Error(local.s3.send(new HeadObjectCommand({ Bucket, Key: 'del/match' })), 'NotFound', 404);
  });

  it('answers 412 on a different ETag and keeps the object', async () => {
    await put('del/mismatch', 'x');
    await expectS3Error(
      local.s3.send(new DeleteObjectCommand({ Bucket, Key: 'del/mismatch', IfMatch: '"0000"' })),
      'PreconditionFailed',
      412,
    );
    expect(await read('del/mismatch')).toBe('x');
  });

  it('answers 404 NoSuchKey for a missing key', async () => {
    await expectS3Error(
      local.s3.send(new DeleteObjectCommand({ Bucket, Key: 'del/missing', IfMatch: '"0000"' })),
      'NoSuchKey',
      404,
    );
    await expectS3Error(
      local.s3.send(new DeleteObjectCommand({ Bucket, Key: 'del/missing', IfMatch: '*' })),
      'NoSuchKey',
      404,
    );
  });

  it('treats If-Match: * as "the object exists"', async () => {
    await put('del/star', 'x');
    await local.s3.send(new DeleteObjectCommand({ Bucket, Key: 'del/star', IfMatch: '*' }));
    await expectS3Error(local.s3.send(new HeadObjectCommand({ Bucket, Key: 'del/star' })), 'NotFound', 404);
  });
});

describe('conditional GET and HEAD', () => {
  let etag: string;
  let modified: Date;
  const Key = 'read/cond';
  const later = () => new Date(modified.getTime() + 10_000);
  const earlier = () => new Date(modified.getTime() - 10_000);

  beforeAll(async () => {
    etag = (await put(Key, 'content')).ETag!;
    modified = (await local.s3.send(new HeadObjectCommand({ Bucket, Key }))).LastModified!;
  });

  const get = (extra: Record<string, unknown>) =>
    local.s3.send(new GetObjectCommand({ Bucket, Key, ...extra }));
  const head = (extra: Record<string, unknown>) =>
    local.s3.send(new HeadObjectCommand({ Bucket, Key, ...extra }));

  it('If-Match: 200 on match, 412 otherwise', async () => {
    expect(await bodyText((await get({ IfMatch: etag })).Body)).toBe('content');
    await expectS3Error(get({ IfMatch: '"nope"' }), 'PreconditionFailed', 412);
    expect((await head({ IfMatch: etag })).ETag).toBe(etag);
    const headErr = await sdkError(head({ IfMatch: '"nope"' }));
    expect(headErr.$metadata?.httpStatusCode).toBe(412);
  });

  it('If-None-Match: 304 on match, 200 otherwise', async () => {
    const err = await sdkError(get({ IfNoneMatch: etag }));
    expect(err.$metadata?.httpStatusCode).toBe(304);
    expect(await bodyText((await get({ IfNoneMatch: '"other"' })).Body)).toBe('content');
    expect((await sdkError(head({ IfNoneMatch: etag }))).$metadata?.httpStatusCode).toBe(304);
    expect((await sdkError(head({ IfNoneMatch: '*' }))).$metadata?.httpStatusCode).toBe(304);
  });

  it('sends ETag and Last-Modified with a 304 and no body', async () => {
    const res = await rawRequest(local.server, {
      method: 'GET',
      path: `/${Bucket}/${Key}`,
      headers: { 'if-none-match': etag },
    });
    expect(res.status).toBe(304);
    expect(res.headers.etag).toBe(etag);
    expect(res.headers['last-modified']).toBe(modified.toUTCString());
    expect(res.body).toBe('');
  });

  it('If-Modified-Since: 304 when not modified since, 200 when modified', async () => {
    expect((await sdkError(get({ IfModifiedSince: modified }))).$metadata?.httpStatusCode).toBe(304);
    expect(await bodyText((await get({ IfModifiedSince: earlier() })).Body)).toBe('content');
    expect((await sdkError(head({ IfModifiedSince: modified }))).$metadata?.httpStatusCode).toBe(304);
  });

  it('If-Unmodified-Since: 412 when modified since, 200 otherwise', async () => {
    await expectS3Error(get({ IfUnmodifiedSince: earlier() }), 'PreconditionFailed', 412);
    expect(await bodyText((await get({ IfUnmodifiedSince: later() })).Body)).toBe('content');
    expect((await sdkError(head({ IfUnmodifiedSince: earlier() }))).$metadata?.httpStatusCode).toBe(412);
  });

  it('If-Match that holds overrides a failing If-Unmodified-Since (200)', async () => {
    const res = await get({ IfMatch: etag, IfUnmodifiedSince: earlier() });
    expect(await bodyText(res.Body)).toBe('content');
  });

  it('If-None-Match that fails overrides a holding If-Modified-Since (304)', async () => {
    const err = await sdkError(get({ IfNoneMatch: etag, IfModifiedSince: earlier() }));
    expect(err.$metadata?.httpStatusCode).toBe(304);
  });

  it('If-Match failure (412) wins over If-None-Match (304)', async () => {
    await expectS3Error(get({ IfMatch: '"nope"', IfNoneMatch: etag }), 'PreconditionFailed', 412);
  });

  it('a missing key is 404 whatever the conditions', async () => {
    await expectS3Error(
      local.s3.send(new GetObjectCommand({ Bucket, Key: 'read/none', IfNoneMatch: '*' })),
      'NoSuchKey',
      404,
    );
  });
});

describe('concurrent conditional writes', () => {
  it('50 racing If-None-Match: * puts on one key: exactly one wins, the rest get 412 or 409', async () => {
    const Key = 'race/create';
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => put(Key, `writer-${i}`, { IfNoneMatch: '*' })),
    );
    const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    expect(winners).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected')
        expect(['PreconditionFailed', 'ConditionalRequestConflict']).toContain(r.reason.name);
    }
    expect(await read(Key)).toBe(`writer-${winners[0]}`);
  });

  it('racing If-Match puts carrying the same ETag: exactly one wins', async () => {
    const Key = 'race/update';
    const { ETag } = await put(Key, 'base');
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => put(Key, `updater-${i}`, { IfMatch: ETag })),
    );
    const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    expect(winners).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected')
        expect(['PreconditionFailed', 'ConditionalRequestConflict']).toContain(r.reason.name);
    }
    expect(await read(Key)).toBe(`updater-${winners[0]}`);
  });

  it('answers 409 ConditionalRequestConflict when the key changed while the request was in flight', async () => {
    const Key = 'race/in-flight';
    // The latency fault holds the conditional put after the server received it; its hit count tells
    // us when that happened, without guessing at timing.
    const hold = local.server.faults.latency({ op: 'PutObject', key: Key, times: 1 }, 300);
    const pending = sdkError(put(Key, 'slow', { IfNoneMatch: '*' }));
    await until(() => hold.hits === 1);
    await put(Key, 'fast');
    const err = await pending;
    expect(err.name).toBe('ConditionalRequestConflict');
    expect(err.$metadata?.httpStatusCode).toBe(409);
    expect(await read(Key)).toBe('fast');
  });

  it('answers 409 to a conditional put whose body upload overlapped another write', async () => {
    const Key = 'race/slow-body';
    const arrived = local.server.faults.latency({ op: 'PutObject', key: Key, times: 1 }, 0);
    const slow = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: local.server.host,
          port: local.server.port,
          method: 'PUT',
          path: `/${Bucket}/${Key}`,
          headers: { 'content-length': 10, 'if-none-match': '*' },
          agent: false,
          timeout: 5000,
        },
        (res) => {
          let body = '';
          res.on('data', (c) => {
            body += c;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.write('first');
      // Finish the body only after a competing write has committed.
      void until(() => arrived.hits === 1)
        .then(() => put(Key, 'competitor'))
        .then(() => req.end('-half'), reject);
    });
    const res = await slow;
    expect(res.status).toBe(409);
    expect(res.body).toContain('<Code>ConditionalRequestConflict</Code>');
    expect(await read(Key)).toBe('competitor');
  });

  it('writes to other keys do not conflict', async () => {
    const hold = local.server.faults.latency({ op: 'PutObject', key: 'race/mine', times: 1 }, 200);
    const pending = put('race/mine', 'mine', { IfNoneMatch: '*' });
    await until(() => hold.hits === 1);
    await put('race/yours', 'yours');
    await pending;
    expect(await read('race/mine')).toBe('mine');
  });

  it('a conditional delete conflicts with a put that landed while it was in flight', async () => {
    const Key = 'race/delete';
    const { ETag } = await put(Key, 'v1');
    const hold = local.server.faults.latency({ op: 'DeleteObject', key: Key, times: 1 }, 300);
    const pending = sdkError(local.s3.send(new DeleteObjectCommand({ Bucket, Key, IfMatch: ETag })));
    await until(() => hold.hits === 1);
    await put(Key, 'v1'); // same content, same ETag: still a conflicting write
    expect((await pending).name).toBe('ConditionalRequestConflict');
    expect(await read(Key)).toBe('v1');
  });
});

describe('conditionalWrites: false', () => {
  let plain: S3Server;
  let client: S3Client;

  beforeAll(async () => {
    plain = await startS3Server({ bucket: Bucket, conditionalWrites: false });
    client = s3Client(plain);
  });

  afterAll(async () => {
    client.destroy();
    await plain.stop();
  });

  const send = (Key: string, Body: string, extra: { IfMatch?: string; IfNoneMatch?: string } = {}) =>
    client.send(new PutObjectCommand({ Bucket, Key, Body, ...extra }));
  const text = async (Key: string) =>
    bodyText((await client.send(new GetObjectCommand({ Bucket, Key }))).Body);

  it('ignores If-None-Match and If-Match on PutObject', async () => {
    await send('k', 'one', { IfNoneMatch: '*' });
    await send('k', 'two', { IfNoneMatch: '*' });
    expect(await text('k')).toBe('two');
    await send('k', 'three', { IfMatch: '"not-the-etag"' });
    expect(await text('k')).toBe('three');
    await send('k', 'four', { IfNoneMatch: '"anything"' });
    expect(await text('k')).toBe('four');
    await send('absent', 'created', { IfMatch: '"x"' });
    expect(await text('absent')).toBe('created');
  });

  it('lets every racing create-only put succeed (last writer wins)', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => send('race', `w${i}`, { IfNoneMatch: '*' })),
    );
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
  });

  it('ignores If-Match on DeleteObject', async () => {
    await send('del', 'x');
    await client.send(new DeleteObjectCommand({ Bucket, Key: 'del', IfMatch: '"wrong"' }));
    await expectS3Error(client.send(new HeadObjectCommand({ Bucket, Key: 'del' })), 'NotFound', 404);
  });

  it('still evaluates conditional reads', async () => {
    const { ETag } = await send('read', 'x');
    const err = await sdkError(client.send(new GetObjectCommand({ Bucket, Key: 'read', IfNoneMatch: ETag })));
    expect(err.$metadata?.httpStatusCode).toBe(304);
  });
});
