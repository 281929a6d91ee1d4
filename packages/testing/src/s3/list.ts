import type { Bucket, StoredObject } from './bucket-store.js';
import { s3Error } from './errors.js';

/**
 * Listing (ListObjectsV2 and the older ListObjects). Keys come out in the order of their UTF-8 bytes,
 * as S3 lists them — not JS string order, which differs for characters outside the BMP. With a
 * delimiter, keys sharing a prefix up to the delimiter roll up into one CommonPrefix, which counts as
 * one entry towards max-keys.
 */

export interface ListQuery {
  prefix: string;
  /** Empty string means no delimiter. */
  delimiter: string;
  maxKeys: number;
  /** Exclusive lower bound: a key or common prefix returned earlier, or a caller's start-after / marker. */
  after?: string;
}

export interface ListPage {
  objects: StoredObject[];
  commonPrefixes: string[];
  isTruncated: boolean;
  /** The last key or common prefix on this page: where the next page starts after. */
  last?: string;
}

// No byte of valid UTF-8 is 0xFF, so "prefix + 0xFF" sorts after every key that starts with prefix.
const PAST = Buffer.from([0xff]);

export function listPage(bucket: Bucket, query: ListQuery): ListPage {
  const page: ListPage = { objects: [], commonPrefixes: [], isTruncated: false };
  if (query.maxKeys === 0) return page;
  const prefix = Buffer.from(query.prefix, 'utf8');
  const delimiter = query.delimiter === '' ? undefined : Buffer.from(query.delimiter, 'utf8');
  const after = query.after === undefined ? undefined : Buffer.from(query.after, 'utf8');
  let count = 0;
  let i = bucket.lowerBound(after && Buffer.compare(after, prefix) > 0 ? after : prefix);
  for (let entry = bucket.entryAt(i); entry; entry = bucket.entryAt(i)) {
    const { bytes, object } = entry;
    if (!startsWith(bytes, prefix)) break;
    if (after && Buffer.compare(bytes, after) <= 0) {
      i++;
      continue;
    }
    const cut = delimiter ? bytes.indexOf(delimiter, prefix.length) : -1;
    if (delimiter && cut >= 0) {
      const common = bytes.subarray(0, cut + delimiter.length);
      // Jump over every key under this common prefix: it is reported once (or was already, when the
      // previous page ended on it).
      i = bucket.lowerBound(Buffer.concat([common, PAST]));
      if (after && common.equals(after)) continue;
      if (count === query.maxKeys) {
        page.isTruncated = true;
        break;
      }
      const text = common.toString('utf8');
      page.commonPrefixes.push(text);
      page.last = text;
      count++;
      continue;
    }
    if (count === query.maxKeys) {
      page.isTruncated = true;
      break;
    }
    page.objects.push(object);
    page.last = object.key;
    count++;
    i++;
  }
  return page;
}

function startsWith(bytes: Buffer, prefix: Buffer): boolean {
  return bytes.length >= prefix.length && bytes.subarray(0, prefix.length).equals(prefix);
}

// Continuation tokens are opaque to clients; here they carry the last returned key or common prefix.
const TOKEN_VERSION = 'L1:';

export function encodeContinuationToken(last: string): string {
  return Buffer.from(TOKEN_VERSION + last, 'utf8').toString('base64url');
}

export function decodeContinuationToken(token: string): string {
  const text = Buffer.from(token, 'base64url').toString('utf8');
  if (
    !text.startsWith(TOKEN_VERSION) ||
    encodeContinuationToken(text.slice(TOKEN_VERSION.length)) !== token
  ) {
    throw s3Error('InvalidArgument', {
      message: 'The continuation token provided is incorrect',
      extra: { ArgumentName: 'continuation-token' },
    });
  }
  return text.slice(TOKEN_VERSION.length);
}

/**
 * `max-keys` (or ListParts' `max-parts`, ListMultipartUploads' `max-uploads`): absent means 1000,
 * larger values are capped at 1000 like S3 does.
 */
export function parseMaxKeys(value: string | null, name = 'max-keys'): number {
  if (value === null) return 1000;
  if (!/^\d+$/.test(value)) {
    throw s3Error('InvalidArgument', {
      message: `Provided ${name} not an integer or within integer range`,
      extra: { ArgumentName: name, ArgumentValue: value },
    });
  }
  return Math.min(Number(value), 1000);
}

/**
 * `encoding-type=url`: keys, prefixes and delimiters in the response are percent-encoded so that
 * characters XML cannot carry survive. '/' is left as is; everything outside the unreserved set is
 * encoded, which any URL decoder reverses.
 */
export function urlEncodeKey(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%2F/g, '/');
}
