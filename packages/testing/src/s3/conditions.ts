import type { IncomingHttpHeaders } from 'node:http';
import type { Bucket, StoredObject } from './bucket-store.js';
import type { RequestContext } from './context.js';
import { s3Error } from './errors.js';
import { header } from './headers.js';
import type { S3Personality } from './personality.js';

/**
 * Conditional request evaluation.
 *
 * Reads (GET/HEAD) follow RFC 7232 section 6 as S3 documents it: If-Match, else If-Unmodified-Since,
 * can fail with 412; then If-None-Match, else If-Modified-Since, can answer 304. So If-Match that holds
 * makes a failing If-Unmodified-Since irrelevant, and If-None-Match that fails wins over a holding
 * If-Modified-Since.
 *
 * Writes follow S3's conditional writes: PutObject, CompleteMultipartUpload and CopyObject (for its
 * destination) take `If-None-Match: *` (412 when the key exists) and `If-Match: <etag>` (412 on a
 * different ETag, 404 NoSuchKey when there is no object); DeleteObject takes `If-Match` with the
 * same outcomes.
 *
 * ETag values are compared leniently, as S3 does: surrounding quotes and a `W/` prefix are optional and
 * a comma-separated list matches if any member does. A value that is not a well-formed entity tag is
 * not an error; it simply never matches.
 */

export interface EtagList {
  /** `*`: any current object matches. */
  readonly any: boolean;
  /** Unquoted tags. */
  readonly tags: readonly string[];
}

export function parseEtagList(value: string): EtagList {
  const trimmed = value.trim();
  if (trimmed === '*') return { any: true, tags: [] };
  const tags = trimmed
    .split(',')
    .map((t) => unquote(t.trim().replace(/^W\//, '')))
    .filter((t) => t !== '');
  return { any: false, tags };
}

function unquote(tag: string): string {
  return tag.length >= 2 && tag.startsWith('"') && tag.endsWith('"') ? tag.slice(1, -1) : tag;
}

export function etagMatches(list: EtagList, object: StoredObject): boolean {
  return list.any || list.tags.includes(unquote(object.etag));
}

/** Whole seconds, the precision of HTTP dates. */
function seconds(ms: number): number {
  return Math.floor(ms / 1000);
}

function parseHttpDate(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Throws 412 PreconditionFailed or 304 NotModified when the read preconditions do not hold. */
export function evaluateReadConditions(headers: IncomingHttpHeaders, object: StoredObject): void {
  const modified = seconds(object.lastModified.getTime());
  const ifMatch = header(headers, 'if-match');
  if (ifMatch !== undefined) {
    if (!etagMatches(parseEtagList(ifMatch), object)) throw preconditionFailed('If-Match');
  } else {
    // An unparseable date makes the header void (RFC 7232 3.4).
    const since = parseHttpDate(header(headers, 'if-unmodified-since'));
    if (since !== undefined && modified > seconds(since)) throw preconditionFailed('If-Unmodified-Since');
  }
  const ifNoneMatch = header(headers, 'if-none-match');
  if (ifNoneMatch !== undefined) {
    if (etagMatches(parseEtagList(ifNoneMatch), object)) throw notModified(object);
  } else {
    // A date in the future is invalid and ignored (RFC 7232 3.3).
    const since = parseHttpDate(header(headers, 'if-modified-since'));
    if (since !== undefined && since <= Date.now() && modified <= seconds(since)) throw notModified(object);
  }
}

/** The preconditions of a write, checked for support when the request arrives, evaluated at commit. */
export interface WriteConditions {
  readonly ifMatch?: EtagList;
  /** `If-None-Match: *` — create only. */
  readonly ifNoneMatch: boolean;
}

/** The writes that take conditions; all but DeleteObject create an object and read them alike. */
export type ConditionalWrite = 'PutObject' | 'CompleteMultipartUpload' | 'CopyObject' | 'DeleteObject';

/**
 * Reads the conditional headers of a write. Returns undefined for an unconditional write. Headers
 * S3 does not support on that operation answer 501 NotImplemented, like S3 does for `If-None-Match`
 * values other than `*`, so a client never silently loses a precondition.
 */
export function parseWriteConditions(
  op: ConditionalWrite,
  headers: IncomingHttpHeaders,
): WriteConditions | undefined {
  const creates = op !== 'DeleteObject';
  const unsupported = creates
    ? ['if-modified-since', 'if-unmodified-since']
    : [
        'if-none-match',
        'if-modified-since',
        'if-unmodified-since',
        'x-amz-if-match-last-modified-time',
        'x-amz-if-match-size',
      ];
  for (const name of unsupported) {
    if (header(headers, name) !== undefined) throw notImplementedHeader(name, op);
  }
  const ifMatch = header(headers, 'if-match');
  const ifNoneMatch = creates ? header(headers, 'if-none-match') : undefined;
  if (ifNoneMatch !== undefined && ifNoneMatch.trim() !== '*')
    throw notImplementedHeader('if-none-match', op);
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined;
  return {
    ...(ifMatch !== undefined ? { ifMatch: parseEtagList(ifMatch) } : {}),
    ifNoneMatch: ifNoneMatch !== undefined,
  };
}

/** Throws NoSuchKey / PreconditionFailed when the write preconditions do not hold against `current`. */
export function evaluateWriteConditions(
  conditions: WriteConditions,
  current: StoredObject | undefined,
  where: { bucket: string; key: string },
): void {
  if (conditions.ifMatch) {
    if (!current) throw s3Error('NoSuchKey', { key: where.key });
    if (!etagMatches(conditions.ifMatch, current)) throw preconditionFailed('If-Match');
  }
  if (conditions.ifNoneMatch && current) throw preconditionFailed('If-None-Match');
}

/**
 * A conditional write must not commit when another write to the same key committed after this request
 * arrived: its preconditions were judged against a state that is gone. S3 reports that as 409
 * ConditionalRequestConflict, so two overlapping conditional writes can never both succeed.
 */
export function assertNoConflict(ctx: RequestContext, bucket: Bucket, key: string): void {
  if (conflicts(ctx, bucket, key)) throw s3Error('ConditionalRequestConflict', { key });
}

/** Whether the bucket or the key changed since the request arrived. */
export function conflicts(ctx: RequestContext, bucket: Bucket, key: string): boolean {
  return bucket !== ctx.arrival.bucket || bucket.version(key) !== ctx.arrival.version;
}

export function preconditionFailed(condition: string) {
  return s3Error('PreconditionFailed', { extra: { Condition: condition } });
}

function notModified(object: StoredObject) {
  return s3Error('NotModified', {
    headers: { etag: object.etag, 'last-modified': object.lastModified.toUTCString() },
  });
}

function notImplementedHeader(name: string, op: string) {
  return s3Error('NotImplemented', {
    message: `A header you provided implies functionality that is not implemented (${name} on ${op}).`,
    extra: {
      Header: name.replace(/(^|-)([a-z])/g, (_m, dash: string, ch: string) => dash + ch.toUpperCase()),
    },
  });
}

/**
 * The conditions of a PutObject or DeleteObject as this personality treats them: ignored ones
 * dropped, and 501 NotImplemented for one it does not implement.
 */
export function conditionsUnder(
  personality: S3Personality,
  op: 'PutObject' | 'DeleteObject',
  conditions: WriteConditions | undefined,
): WriteConditions | undefined {
  if (!conditions) return undefined;
  const ifMatch = op === 'PutObject' ? personality.putIfMatch : personality.deleteIfMatch;
  const ifNoneMatch = op === 'PutObject' ? personality.putIfNoneMatch : 'honour';
  if (conditions.ifMatch && ifMatch === 'not-implemented') throw notImplemented('If-Match', op);
  if (conditions.ifNoneMatch && ifNoneMatch === 'not-implemented') throw notImplemented('If-None-Match', op);
  const keepMatch = conditions.ifMatch && ifMatch !== 'ignore';
  const keepNoneMatch = conditions.ifNoneMatch && ifNoneMatch !== 'ignore';
  if (!keepMatch && !keepNoneMatch) return undefined;
  return { ...(keepMatch ? { ifMatch: conditions.ifMatch } : {}), ifNoneMatch: Boolean(keepNoneMatch) };
}

function notImplemented(header: string, op: string) {
  return s3Error('NotImplemented', {
    message: `This store does not implement conditional writes (${header} on ${op}).`,
    extra: { Header: header },
  });
}
