import {
  ListObjectsCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandInput,
  type ListObjectsV2CommandOutput,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectS3Error, putManyRaw, rawRequest, useS3Server } from './s3-helpers.js';

const Bucket = 'listing';
const local = useS3Server({ bucket: Bucket });

async function putAll(keys: string[]): Promise<void> {
  await Promise.all(keys.map((Key) => local.s3.send(new PutObjectCommand({ Bucket, Key, Body: Key }))));
}

/** Follows continuation tokens to the end; returns every page. */
async function allPages(
  input: Omit<ListObjectsV2CommandInput, 'Bucket'>,
): Promise<ListObjectsV2CommandOutput[]> {
  const pages: ListObjectsV2CommandOutput[] = [];
  let ContinuationToken: string | undefined;
  do {
    const page = await local.s3.send(new ListObjectsV2Command({ Bucket, ...input, ContinuationToken }));
    pages.push(page);
    ContinuationToken = page.NextContinuationToken;
    if (pages.length > 100) throw new Error('pagination does not end');
  } while (ContinuationToken);
  return pages;
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

describe('ListObjectsV2 pagination', () => {
  const keys = Array.from({ length: 2500 }, (_, i) => `many/${String(i).padStart(5, '0')}`);

  beforeAll(async () => {
    await putManyRaw(local.server, Bucket, keys);
  });

  it('pages through 2500 keys 1000 at a time with continuation tokens', async () => {
    const pages = await allPages({ Prefix: 'many/' });
    expect(pages.map((p) => p.KeyCount)).toEqual([1000, 1000, 500]);
    expect(pages.map((p) => p.IsTruncated)).toEqual([true, true, false]);
    expect(pages[2]?.NextContinuationToken).toBeUndefined();
    expect(pages[1]?.ContinuationToken).toBe(pages[0]?.NextContinuationToken);
    expect(pages.flatMap((p) => p.Contents?.map((c) => c.Key))).toEqual(keys);
    const first = pages[0]?.Contents?.[0];
    expect(first?.Size).toBe(first?.Key?.length);
    expect(first?.ETag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(first?.StorageClass).toBe('STANDARD');
    expect(first?.LastModified).toBeInstanceOf(Date);
  });

  it('caps max-keys at 1000 and honours smaller values', async () => {
    const big = await local.s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'many/', MaxKeys: 5000 }));
    expect(big.KeyCount).toBe(1000);
    expect(big.MaxKeys).toBe(1000);
    const pages = await allPages({ Prefix: 'many/', MaxKeys: 700 });
    expect(pages.map((p) => p.KeyCount)).toEqual([700, 700, 700, 400]);
    expect(pages.flatMap((p) => p.Contents?.map((c) => c.Key))).toEqual(keys);
  });

  it('starts after a given key', async () => {
    const res = await local.s3.send(
      new ListObjectsV2Command({ Bucket, Prefix: 'many/', StartAfter: 'many/02495', MaxKeys: 10 }),
    );
    expect(res.Contents?.map((c) => c.Key)).toEqual(['many/02496', 'many/02497', 'many/02498', 'many/02499']);
    expect(res.StartAfter).toBe('many/02495');
    expect(res.IsTruncated).toBe(false);
    const between = await local.s3.send(
      new ListObjectsV2Command({ Bucket, StartAfter: 'many/00001x', MaxKeys: 1 }),
    );
    expect(between.Contents?.map((c) => c.Key)).toEqual(['many/00002']);
  });

  it('rejects a forged continuation token', async () => {
    await expectS3Error(
      local.s3.send(new ListObjectsV2Command({ Bucket, ContinuationToken: 'not-a-token' })),
      'InvalidArgument',
      400,
    );
  });
});

describe('ListObjectsV2 with a delimiter', () => {
  beforeAll(async () => {
    await putAll([
      'tree/a.txt',
      'tree/dir1/x',
      'tree/dir1/y',
      'tree/dir1/sub/z',
      'tree/dir2/x',
      'tree/dir3/x',
      'tree/z.txt',
    ]);
  });

  it('rolls keys up into CommonPrefixes', async () => {
    const res = await local.s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'tree/', Delimiter: '/' }));
    expect(res.Contents?.map((c) => c.Key)).toEqual(['tree/a.txt', 'tree/z.txt']);
    expect(res.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['tree/dir1/', 'tree/dir2/', 'tree/dir3/']);
    expect(res.KeyCount).toBe(5);
    expect(res.Delimiter).toBe('/');
  });

  it('counts a common prefix once towards max-keys and pages across prefixes', async () => {
    const pages = await allPages({ Prefix: 'tree/', Delimiter: '/', MaxKeys: 2 });
    expect(
      pages.map((p) => [
        ...(p.Contents ?? []).map((c) => c.Key),
        ...(p.CommonPrefixes ?? []).map((c) => c.Prefix),
      ]),
    ).toEqual([['tree/a.txt', 'tree/dir1/'], ['tree/dir2/', 'tree/dir3/'], ['tree/z.txt']]);
  });

  it('lists one level down with a longer prefix', async () => {
    const res = await local.s3.send(
      new ListObjectsV2Command({ Bucket, Prefix: 'tree/dir1/', Delimiter: '/' }),
    );
    expect(res.Contents?.map((c) => c.Key)).toEqual(['tree/dir1/x', 'tree/dir1/y']);
    expect(res.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['tree/dir1/sub/']);
  });

  it('supports delimiters other than "/"', async () => {
    const res = await local.s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'tree/', Delimiter: '.' }));
    expect(res.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['tree/a.', 'tree/z.']);
    expect(res.Contents?.map((c) => c.Key)).toEqual([
      'tree/dir1/sub/z',
      'tree/dir1/x',
      'tree/dir1/y',
      'tree/dir2/x',
      'tree/dir3/x',
    ]);
  });

  it('returns nothing for a prefix no key has', async () => {
    const res = await local.s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'nothing-here/' }));
    expect(res.KeyCount).toBe(0);
    expect(res.Contents).toBeUndefined();
    expect(res.IsTruncated).toBe(false);
  });
});

describe('key order', () => {
  const unicode = ['u/z', 'u/a', 'u/\u00e9', 'u/\uFFFD', 'u/😀', 'u/A', 'u/\u00e9z', 'u/𝔘', 'u/\uE000'];

  beforeAll(async () => {
    await putAll(unicode);
  });

  it('orders keys by their UTF-8 bytes, not by JS string order', async () => {
    const res = await local.s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'u/' }));
    const listed = res.Contents?.map((c) => c.Key);
    const expected = [...unicode].sort(byteOrder);
    expect(listed).toEqual(expected);
    // U+FFFD and U+E000 sort before astral characters in UTF-8, after them in UTF-16.
    expect(listed?.indexOf('u/\uFFFD')).toBeLessThan(listed?.indexOf('u/😀') ?? -1);
    expect(expected).not.toEqual([...unicode].sort());
  });

  it('paginates in the same order', async () => {
    const pages = await allPages({ Prefix: 'u/', MaxKeys: 2 });
    expect(pages.flatMap((p) => p.Contents?.map((c) => c.Key))).toEqual([...unicode].sort(byteOrder));
  });
});

describe('encoding-type=url', () => {
  it('percent-encodes keys and prefixes in the response', async () => {
    await putAll(['enc/a b', 'enc/ü/x', 'enc/ctl\u0001']);
    const res = await local.s3.send(
      new ListObjectsV2Command({ Bucket, Prefix: 'enc/', Delimiter: '/', EncodingType: 'url' }),
    );
    expect(res.EncodingType).toBe('url');
    expect(res.Contents?.map((c) => c.Key)).toEqual(['enc/a%20b', 'enc/ctl%01']);
    expect(res.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['enc/%C3%BC/']);
    expect(res.Contents?.map((c) => decodeURIComponent(c.Key ?? ''))).toEqual(['enc/a b', 'enc/ctl\u0001']);
  });

  it('rejects other encoding types', async () => {
    const res = await rawRequest(local.server, {
      method: 'GET',
      path: `/${Bucket}?list-type=2&encoding-type=base64`,
    });
    expect(res.status).toBe(400);
    expect(res.code).toBe('InvalidArgument');
  });
});

describe('ListObjects (v1)', () => {
  it('pages with markers', async () => {
    await putAll(['v1/a', 'v1/b', 'v1/c/1', 'v1/c/2', 'v1/d']);
    const first = await local.s3.send(new ListObjectsCommand({ Bucket, Prefix: 'v1/', MaxKeys: 2 }));
    expect(first.Contents?.map((c) => c.Key)).toEqual(['v1/a', 'v1/b']);
    expect(first.IsTruncated).toBe(true);
    const second = await local.s3.send(new ListObjectsCommand({ Bucket, Prefix: 'v1/', Marker: 'v1/b' }));
    expect(second.Contents?.map((c) => c.Key)).toEqual(['v1/c/1', 'v1/c/2', 'v1/d']);
    const grouped = await local.s3.send(
      new ListObjectsCommand({ Bucket, Prefix: 'v1/', Delimiter: '/', MaxKeys: 3 }),
    );
    expect(grouped.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['v1/c/']);
    expect(grouped.NextMarker).toBe('v1/c/');
    const rest = await local.s3.send(
      new ListObjectsCommand({ Bucket, Prefix: 'v1/', Delimiter: '/', Marker: grouped.NextMarker }),
    );
    expect(rest.Contents?.map((c) => c.Key)).toEqual(['v1/d']);
    expect(rest.CommonPrefixes).toBeUndefined();
  });
});
