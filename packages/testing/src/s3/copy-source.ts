import type { IncomingHttpHeaders } from 'node:http';
import type { BucketStore, StoredObject } from './bucket-store.js';
import { etagMatches, parseEtagList, preconditionFailed } from './conditions.js';
import { s3Error } from './errors.js';
import { header } from './headers.js';
import { percentDecode } from './routes.js';

/**
 * The source of CopyObject and UploadPartCopy: `x-amz-copy-source` (`bucket/key`, URL-encoded, with
 * an optional leading slash and `?versionId=`), the `x-amz-copy-source-if-*` conditions, and
 * UploadPartCopy's `x-amz-copy-source-range`.
 */

export interface CopySource {
  readonly bucket: string;
  readonly key: string;
}

export function parseCopySource(value: string): CopySource {
  const q = value.indexOf('?');
  const path = (q < 0 ? value : value.slice(0, q)).replace(/^\//, '');
  const decoded = percentDecode(path);
  const slash = decoded?.indexOf('/') ?? -1;
  if (decoded === undefined || slash <= 0 || slash === decoded.length - 1) {
    throw s3Error('InvalidArgument', {
      message: 'Copy Source must mention the source bucket and key: sourcebucket/sourcekey',
      extra: { ArgumentName: 'x-amz-copy-source', ArgumentValue: value },
    });
  }
  // Buckets here are unversioned: the current object is version "null", and no other version exists.
  const versionId = new URLSearchParams(q < 0 ? '' : value.slice(q + 1)).get('versionId');
  if (versionId !== null && versionId !== 'null') {
    throw s3Error('NoSuchVersion', { key: decoded.slice(slash + 1), extra: { VersionId: versionId } });
  }
  return { bucket: decoded.slice(0, slash), key: decoded.slice(slash + 1) };
}

/** Where the copy comes from and the object there: NoSuchBucket, NoSuchKey, or 412 when a condition fails. */
export function readCopySource(
  store: BucketStore,
  headers: IncomingHttpHeaders,
): { source: CopySource; object: StoredObject } {
  const source = parseCopySource(header(headers, 'x-amz-copy-source') ?? '');
  const object = store.require(source.bucket).get(source.key);
  if (!object) throw s3Error('NoSuchKey', { key: source.key });
  evaluateCopySourceConditions(headers, object);
  return { source, object };
}

/**
 * The copy-source conditions, in S3's precedence: a matching `-if-match` makes `-if-unmodified-since`
 * irrelevant, and a failing `-if-none-match` wins over `-if-modified-since`. Unlike GET, every failed
 * condition answers 412 PreconditionFailed (there is no 304 for a copy).
 */
function evaluateCopySourceConditions(headers: IncomingHttpHeaders, object: StoredObject): void {
  const modified = seconds(object.lastModified.getTime());
  const ifMatch = header(headers, 'x-amz-copy-source-if-match');
  if (ifMatch !== undefined) {
    if (!etagMatches(parseEtagList(ifMatch), object)) throw preconditionFailed('x-amz-copy-source-If-Match');
  } else {
    const since = httpDate(header(headers, 'x-amz-copy-source-if-unmodified-since'));
    if (since !== undefined && modified > seconds(since)) {
      throw preconditionFailed('x-amz-copy-source-If-Unmodified-Since');
    }
  }
  const ifNoneMatch = header(headers, 'x-amz-copy-source-if-none-match');
  if (ifNoneMatch !== undefined) {
    if (etagMatches(parseEtagList(ifNoneMatch), object)) {
      throw preconditionFailed('x-amz-copy-source-If-None-Match');
    }
  } else {
    const since = httpDate(header(headers, 'x-amz-copy-source-if-modified-since'));
    if (since !== undefined && since <= Date.now() && modified <= seconds(since)) {
      throw preconditionFailed('x-amz-copy-source-If-Modified-Since');
    }
  }
}

/**
 * UploadPartCopy's `x-amz-copy-source-range: bytes=first-last`, inclusive. Unlike a GET Range it must
 * be exactly that form and lie inside the source (else 400 InvalidArgument, as on S3).
 */
export function copySourceRange(
  value: string | undefined,
  size: number,
): { start: number; end: number } | undefined {
  if (value === undefined) return undefined;
  const m = /^bytes=(\d{1,15})-(\d{1,15})$/.exec(value.trim());
  if (!m) {
    throw s3Error('InvalidArgument', {
      message:
        'The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy',
      extra: { ArgumentName: 'x-amz-copy-source-range', ArgumentValue: value },
    });
  }
  const start = Number(m[1]);
  const end = Number(m[2]);
  if (start > end || end >= size) {
    throw s3Error('InvalidArgument', {
      message: `Range specified is not valid for source object of size: ${size}`,
      extra: { ArgumentName: 'x-amz-copy-source-range', ArgumentValue: value },
    });
  }
  return { start, end };
}

function seconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** An HTTP date; one that cannot be parsed makes its condition void, as for GET. */
function httpDate(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}
