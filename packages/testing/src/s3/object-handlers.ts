import type { Bucket, StoredObject } from './bucket-store.js';
import { checksumHeaders, md5Hex } from './checksums.js';
import {
  assertNoConflict,
  conditionsUnder,
  etagMatches,
  evaluateReadConditions,
  evaluateWriteConditions,
  parseEtagList,
  parseWriteConditions,
} from './conditions.js';
import {
  bucketName,
  objectKey,
  parseXmlBody,
  type RequestContext,
  type S3Response,
  xmlResponse,
} from './context.js';
import { defaultMessage, type S3ErrorCode, s3Error } from './errors.js';
import { header } from './headers.js';
import { objectProperties } from './object-properties.js';
import { planPayload, readPayload, requireLength } from './payload.js';
import type { ConditionHandling } from './personality.js';
import { MAX_KEY_BYTES } from './routes.js';
import { childrenNamed, childText, xmlElement, xmlRoot } from './xml.js';

/** DeleteObjects takes at most 1000 keys; 1000 keys of 1024 bytes plus markup fit well under this. */
const MAX_DELETE_BODY = 4 * 1024 * 1024;

export async function putObject(ctx: RequestContext): Promise<S3Response> {
  const { req, config } = ctx;
  const name = bucketName(ctx);
  const key = objectKey(ctx);
  ctx.store.require(name); // answer NoSuchBucket before taking any body
  const conditions = config.conditionalWrites
    ? conditionsUnder(config.personality, 'PutObject', parseWriteConditions('PutObject', req.headers))
    : undefined;
  const plan = planPayload(req.headers, config.maxObjectSize);
  requireLength(plan, req.headers);
  const properties = objectProperties(req.headers);

  const payload = await readPayload(req, plan, config.maxObjectSize);

  // Commit. Nothing below awaits, so checking the preconditions and storing the object is one atomic
  // step with respect to every other request.
  const bucket = ctx.store.require(name);
  if (conditions) {
    assertNoConflict(ctx, bucket, key);
    evaluateWriteConditions(conditions, bucket.get(key), { bucket: name, key });
  }
  const object: StoredObject = {
    key,
    body: payload.body,
    etag: `"${md5Hex(payload.body)}"`,
    lastModified: new Date(),
    ...properties,
    ...(payload.checksum ? { checksum: { ...payload.checksum, type: 'FULL_OBJECT' } } : {}),
  };
  bucket.put(object);
  return { status: 200, headers: { etag: object.etag, ...checksumHeaders(object.checksum) } };
}

export async function getObject(ctx: RequestContext): Promise<S3Response> {
  return readObject(ctx, true);
}

export async function headObject(ctx: RequestContext): Promise<S3Response> {
  return readObject(ctx, false);
}

async function readObject(ctx: RequestContext, withBody: boolean): Promise<S3Response> {
  const { headers: h } = ctx.req;
  const bucket = ctx.store.require(bucketName(ctx));
  const key = objectKey(ctx);
  const staleMs = ctx.config.personality.staleReadsMs ?? 0;
  const object = staleMs > 0 ? bucket.getAsOf(key, Date.now() - staleMs) : bucket.get(key);
  if (!object) throw s3Error('NoSuchKey', { key });
  evaluateReadConditions(h, object);

  const size = object.body.length;
  const range = parseRange(header(h, 'range'), size);
  const headers: Record<string, string | number> = {
    'content-type': object.contentType,
    etag: object.etag,
    'last-modified': object.lastModified.toUTCString(),
    'accept-ranges': 'bytes',
    ...object.standardHeaders,
  };
  for (const [name, value] of Object.entries(object.metadata)) headers[`x-amz-meta-${name}`] = value;
  // The stored checksum covers the whole object, so it is only offered for whole-object reads.
  if (!range && header(h, 'x-amz-checksum-mode')?.toUpperCase() === 'ENABLED') {
    Object.assign(headers, checksumHeaders(object.checksum));
  }
  for (const [param, name] of RESPONSE_OVERRIDES) {
    const value = ctx.route.query.get(param);
    if (value !== null) headers[name] = value;
  }
  let body = object.body;
  let status = 200;
  if (range) {
    body = object.body.subarray(range.start, range.end + 1);
    status = 206;
    headers['content-range'] = `bytes ${range.start}-${range.end}/${size}`;
  }
  headers['content-length'] = body.length;
  return withBody ? { status, headers, body } : { status, headers };
}

const RESPONSE_OVERRIDES = [
  ['response-content-type', 'content-type'],
  ['response-content-language', 'content-language'],
  ['response-expires', 'expires'],
  ['response-cache-control', 'cache-control'],
  ['response-content-disposition', 'content-disposition'],
  ['response-content-encoding', 'content-encoding'],
] as const;

/**
 * A single `bytes=` range. Syntactically invalid or multi-range headers are ignored (the whole object
 * is returned, as RFC 7233 allows); a range starting past the end answers 416 InvalidRange.
 */
function parseRange(value: string | undefined, size: number): { start: number; end: number } | undefined {
  if (value === undefined) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(value.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) throw invalidRange(size);
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== '' && Number(m[2]) < start) return undefined;
  }
  if (start >= size) throw invalidRange(size);
  return { start, end };
}

function invalidRange(size: number) {
  return s3Error('InvalidRange', {
    headers: { 'content-range': `bytes */${size}` },
    extra: { ActualObjectSize: String(size) },
  });
}

export async function deleteObject(ctx: RequestContext): Promise<S3Response> {
  const { req, config } = ctx;
  const name = bucketName(ctx);
  const key = objectKey(ctx);
  const bucket = ctx.store.require(name);
  const conditions = config.conditionalWrites
    ? conditionsUnder(config.personality, 'DeleteObject', parseWriteConditions('DeleteObject', req.headers))
    : undefined;
  if (conditions) {
    assertNoConflict(ctx, bucket, key);
    evaluateWriteConditions(conditions, bucket.get(key), { bucket: name, key });
  }
  // Deleting a key that does not exist succeeds, as on S3 (unless If-Match asked for it to exist).
  bucket.delete(key);
  return { status: 204 };
}

interface DeleteEntry {
  key: string;
  etag?: string;
  versionId?: string;
}

export async function deleteObjects(ctx: RequestContext): Promise<S3Response> {
  const { req, config } = ctx;
  const name = bucketName(ctx);
  ctx.store.require(name);
  const plan = planPayload(req.headers, MAX_DELETE_BODY);
  if (plan.contentMd5 === undefined && plan.checksumAlgorithm === undefined) {
    throw s3Error('InvalidRequest', {
      message: 'Missing required header for this request: Content-MD5 or an x-amz-checksum-* header.',
    });
  }
  const { body } = await readPayload(req, plan, MAX_DELETE_BODY);
  const entries = parseDeleteRequest(body);

  const bucket = ctx.store.require(name);
  const results: string[] = [];
  for (const entry of entries.objects) {
    const code = deleteOne(
      bucket,
      entry,
      config.conditionalWrites ? (config.personality.deleteIfMatch ?? 'honour') : 'ignore',
    );
    if (code) {
      results.push(
        xmlElement('Error', [
          xmlElement('Key', entry.key),
          xmlElement('Code', code),
          xmlElement('Message', defaultMessage(code)),
        ]),
      );
    } else if (!entries.quiet) {
      results.push(xmlElement('Deleted', [xmlElement('Key', entry.key)]));
    }
  }
  return xmlResponse(xmlRoot('DeleteResult', results));
}

/** Deletes one entry of a DeleteObjects request; returns the per-key error code, if any. */
function deleteOne(bucket: Bucket, entry: DeleteEntry, ifMatch: ConditionHandling): S3ErrorCode | undefined {
  if (entry.key === '') return 'InvalidArgument';
  if (Buffer.byteLength(entry.key, 'utf8') > MAX_KEY_BYTES) return 'KeyTooLongError';
  if (entry.versionId !== undefined && entry.versionId !== 'null') return 'NoSuchVersion';
  if (entry.etag !== undefined && ifMatch === 'not-implemented') return 'NotImplemented';
  if (entry.etag !== undefined && ifMatch === 'honour') {
    const current = bucket.get(entry.key);
    if (!current) return 'NoSuchKey';
    if (!etagMatches(parseEtagList(entry.etag), current)) return 'PreconditionFailed';
  }
  bucket.delete(entry.key);
  return undefined;
}

function parseDeleteRequest(body: Buffer): { quiet: boolean; objects: DeleteEntry[] } {
  const root = parseXmlBody(body, 'Delete');
  const nodes = childrenNamed(root, 'Object');
  if (nodes.length === 0 || nodes.length > 1000) throw s3Error('MalformedXML');
  const objects = nodes.map((node): DeleteEntry => {
    const key = childText(node, 'Key');
    if (key === undefined) throw s3Error('MalformedXML');
    const etag = childText(node, 'ETag');
    const versionId = childText(node, 'VersionId');
    return {
      key,
      ...(etag !== undefined ? { etag } : {}),
      ...(versionId !== undefined ? { versionId } : {}),
    };
  });
  const quiet = childText(root, 'Quiet')?.trim().toLowerCase() === 'true';
  return { quiet, objects };
}
