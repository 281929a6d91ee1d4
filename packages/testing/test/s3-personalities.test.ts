import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it } from 'vitest';
import { type S3PersonalityName, type S3Server, startS3Server } from '../src/s3/server.js';
import { bodyText, expectS3Error, s3Client } from './s3-helpers.js';

// Each personality departs from AWS S3 in one named way and in no other: the other conditional
// headers keep working, so a test of one fault shows that fault alone.

const Bucket = 'people';
let running: { server: S3Server; client: S3Client } | undefined;

async function serverLike(personality: S3PersonalityName) {
  const server = await startS3Server({ bucket: Bucket, personality });
  running = { server, client: s3Client(server) };
  const { client } = running;
  return {
    put: (Key: string, Body: string, extra: { IfMatch?: string; IfNoneMatch?: string } = {}) =>
      client.send(new PutObjectCommand({ Bucket, Key, Body, ...extra })),
    del: (Key: string, IfMatch?: string) =>
      client.send(new DeleteObjectCommand({ Bucket, Key, ...(IfMatch ? { IfMatch } : {}) })),
    text: async (Key: string) => bodyText((await client.send(new GetObjectCommand({ Bucket, Key }))).Body),
  };
}

afterEach(async () => {
  running?.client.destroy();
  await running?.server.stop();
  running = undefined;
});

describe('S3 server personalities', () => {
  it('ignores-if-none-match-on-put: a second create-only put succeeds and replaces; If-Match still holds', async () => {
    const s3 = await serverLike('ignores-if-none-match-on-put');
    await s3.put('k', 'one', { IfNoneMatch: '*' });
    await s3.put('k', 'two', { IfNoneMatch: '*' });
    expect(await s3.text('k')).toBe('two');
    await expectS3Error(s3.put('k', 'three', { IfMatch: '"stale"' }), 'PreconditionFailed', 412);
  });

  it('ignores-if-match-on-put: a replace of a stale version succeeds; If-None-Match still holds', async () => {
    const s3 = await serverLike('ignores-if-match-on-put');
    await s3.put('k', 'one', { IfNoneMatch: '*' });
    await s3.put('k', 'two', { IfMatch: '"stale"' });
    expect(await s3.text('k')).toBe('two');
    await expectS3Error(s3.put('k', 'three', { IfNoneMatch: '*' }), 'PreconditionFailed', 412);
  });

  it('ignores-if-match-on-delete: a delete of a stale version removes the object; puts keep their conditions', async () => {
    const s3 = await serverLike('ignores-if-match-on-delete');
    await s3.put('k', 'one', { IfNoneMatch: '*' });
    await expectS3Error(s3.put('k', 'two', { IfMatch: '"stale"' }), 'PreconditionFailed', 412);
    await s3.del('k', '"stale"');
    await expectS3Error(s3.text('k'), 'NoSuchKey', 404);
    // DeleteObjects too: an entry's stale ETag is ignored.
    await s3.put('many', 'one');
    const batch = await running!.client.send(
      new DeleteObjectsCommand({ Bucket, Delete: { Objects: [{ Key: 'many', ETag: '"stale"' }] } }),
    );
    expect(batch.Errors ?? []).toEqual([]);
    await expectS3Error(s3.text('many'), 'NoSuchKey', 404);
  });

  it('no-conditional-writes: every conditional write answers 501 and changes nothing; plain writes work', async () => {
    const s3 = await serverLike('no-conditional-writes');
    await expectS3Error(s3.put('k', 'one', { IfNoneMatch: '*' }), 'NotImplemented', 501);
    const { ETag } = await s3.put('k', 'plain');
    await expectS3Error(s3.put('k', 'two', { IfMatch: ETag! }), 'NotImplemented', 501);
    await expectS3Error(s3.del('k', ETag!), 'NotImplemented', 501);
    expect(await s3.text('k')).toBe('plain');
  });

  it('eventually-consistent: a read right after a write sees the state before it; conditions are judged on the latest', async () => {
    const s3 = await serverLike('eventually-consistent');
    await s3.put('k', 'one', { IfNoneMatch: '*' });
    await expectS3Error(s3.text('k'), 'NoSuchKey', 404);
    await expectS3Error(s3.put('k', 'two', { IfNoneMatch: '*' }), 'PreconditionFailed', 412);
  });

  it('clockOffsetMs: every answer states the server clock that far off', async () => {
    const server = await startS3Server({ bucket: Bucket, personality: { clockOffsetMs: 3_600_000 } });
    running = { server, client: s3Client(server) };
    const answer = await fetch(`${server.endpoint}/${Bucket}/nothing`);
    const stated = Date.parse(answer.headers.get('date') ?? '');
    expect(stated - Date.now()).toBeGreaterThan(3_590_000);
    expect(stated - Date.now()).toBeLessThan(3_610_000);
  });

  it('unorderedListings: a listing page names its objects out of key order, and pages on correctly', async () => {
    const server = await startS3Server({ bucket: Bucket, personality: { unorderedListings: true } });
    running = { server, client: s3Client(server) };
    for (const key of ['a', 'b', 'c'])
      await running.client.send(new PutObjectCommand({ Bucket, Key: key, Body: key }));
    const first = await running.client.send(new ListObjectsV2Command({ Bucket, MaxKeys: 2 }));
    expect(first.Contents?.map((o) => o.Key)).toEqual(['b', 'a']);
    const next = await running.client.send(
      new ListObjectsV2Command({ Bucket, MaxKeys: 2, ContinuationToken: first.NextContinuationToken }),
    );
    expect(next.Contents?.map((o) => o.Key)).toEqual(['c']);
  });

  it('refuses an unknown personality by name, listing the known ones', async () => {
    await expect(startS3Server({ personality: 'garage' as S3PersonalityName })).rejects.toThrow(
      /unknown personality "garage".*ignores-if-none-match-on-put/,
    );
  });
});
