import { type S3Error, s3Error } from './errors.js';

/** The operation names used by faults and the request log. */
export type S3Operation =
  | 'ListBuckets'
  | 'CreateBucket'
  | 'HeadBucket'
  | 'DeleteBucket'
  | 'GetBucketLocation'
  | 'ListObjects'
  | 'ListObjectsV2'
  | 'DeleteObjects'
  | 'PutObject'
  | 'GetObject'
  | 'HeadObject'
  | 'GetObjectTagging'
  | 'DeleteObject'
  | 'CopyObject'
  | 'CreateMultipartUpload'
  | 'UploadPart'
  | 'UploadPartCopy'
  | 'CompleteMultipartUpload'
  | 'AbortMultipartUpload'
  | 'ListParts'
  | 'ListMultipartUploads'
  /** Anything this server does not implement; answered with 501 NotImplemented. */
  | 'Unsupported';

export interface Route {
  op: S3Operation;
  bucket?: string;
  key?: string;
  query: URLSearchParams;
  /** Set when the request cannot be served (bad URI, bad key, unsupported); answered without handling. */
  error?: S3Error;
}

/** Object keys may be up to 1024 bytes of UTF-8. */
export const MAX_KEY_BYTES = 1024;

// Sub-resources that select S3 operations this server does not implement. Other unknown query
// parameters are ignored, as S3 ignores them.
const UNSUPPORTED_SUBRESOURCES = new Set([
  'accelerate',
  'acl',
  'analytics',
  'attributes',
  'cors',
  'encryption',
  'intelligent-tiering',
  'inventory',
  'legal-hold',
  'lifecycle',
  'logging',
  'metadataTable',
  'metrics',
  'notification',
  'object-lock',
  'ownershipControls',
  'policy',
  'policyStatus',
  'publicAccessBlock',
  'renameObject',
  'replication',
  'requestPayment',
  'restore',
  'retention',
  'select',
  'session',
  'tagging',
  'torrent',
  'versionId',
  'versioning',
  'versions',
  'website',
]);

/**
 * Maps a path-style request (`/bucket/key?query`) to an operation. Bucket and key are percent-decoded
 * from the raw path without any dot-segment normalisation, so keys like `a/../b` stay intact.
 */
export function routeRequest(method: string, rawUrl: string, hasCopySource: boolean): Route {
  const q = rawUrl.indexOf('?');
  const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : rawUrl.slice(q + 1));
  const route: Route = { op: 'Unsupported', query };
  if (!rawPath.startsWith('/')) return fail(route, s3Error('InvalidURI'));

  const path = rawPath.slice(1);
  const slash = path.indexOf('/');
  const rawBucket = slash < 0 ? path : path.slice(0, slash);
  const rawKey = slash < 0 ? '' : path.slice(slash + 1);
  if (rawBucket === '' && rawKey !== '') return fail(route, s3Error('InvalidURI')); // "//key": no bucket
  const bucket = percentDecode(rawBucket);
  const key = percentDecode(rawKey);

  if (rawBucket === '') {
    route.op = method === 'GET' ? 'ListBuckets' : 'Unsupported';
  } else if (rawKey === '') {
    route.op = bucketOperation(method, query);
  } else {
    route.op = objectOperation(method, query, hasCopySource);
  }
  if (rawBucket !== '' && bucket !== undefined) route.bucket = bucket;
  if (rawKey !== '' && key !== undefined) route.key = key;

  if (route.op === 'GetObject' && query.has('tagging')) route.op = 'GetObjectTagging';
  const subresource = [...query.keys()].find(
    (name) => UNSUPPORTED_SUBRESOURCES.has(name) && !(name === 'tagging' && route.op === 'GetObjectTagging'),
  );
  if (subresource !== undefined) route.op = 'Unsupported';
  if (route.op === 'Unsupported') {
    const parameter = subresource ?? MULTIPART_PARAMETERS.find((name) => query.has(name));
    const what = parameter !== undefined ? `?${parameter}` : method;
    return fail(
      route,
      s3Error('NotImplemented', { message: `${what} on this resource is not implemented.` }),
    );
  }
  if (bucket === undefined || key === undefined) return fail(route, s3Error('InvalidURI'));
  if (route.key !== undefined && Buffer.byteLength(route.key, 'utf8') > MAX_KEY_BYTES) {
    return fail(route, s3Error('KeyTooLongError', { extra: { MaxSizeAllowed: String(MAX_KEY_BYTES) } }));
  }
  return route;
}

function fail(route: Route, error: S3Error): Route {
  route.error = error;
  return route;
}

// The query parameters of the multipart operations. Sent with any other method or resource, they
// select nothing this server implements.
const MULTIPART_PARAMETERS = ['uploads', 'uploadId', 'partNumber'] as const;

function bucketOperation(method: string, query: URLSearchParams): S3Operation {
  if (MULTIPART_PARAMETERS.some((name) => query.has(name))) {
    const listing =
      method === 'GET' && query.has('uploads') && !query.has('uploadId') && !query.has('partNumber');
    return listing ? 'ListMultipartUploads' : 'Unsupported';
  }
  switch (method) {
    case 'PUT':
      return 'CreateBucket';
    case 'HEAD':
      return 'HeadBucket';
    case 'DELETE':
      return 'DeleteBucket';
    case 'POST':
      return query.has('delete') ? 'DeleteObjects' : 'Unsupported';
    case 'GET':
      if (query.has('location')) return 'GetBucketLocation';
      return query.has('list-type') ? 'ListObjectsV2' : 'ListObjects';
    default:
      return 'Unsupported';
  }
}

function objectOperation(method: string, query: URLSearchParams, hasCopySource: boolean): S3Operation {
  if (query.has('uploads')) return method === 'POST' ? 'CreateMultipartUpload' : 'Unsupported';
  const inUpload = query.has('uploadId');
  switch (method) {
    case 'PUT':
      if (inUpload || query.has('partNumber')) return hasCopySource ? 'UploadPartCopy' : 'UploadPart';
      return hasCopySource ? 'CopyObject' : 'PutObject';
    case 'POST':
      return inUpload ? 'CompleteMultipartUpload' : 'Unsupported';
    case 'GET':
      // GetObject of one part of a multipart object (?partNumber without uploadId) is not implemented.
      if (inUpload) return 'ListParts';
      return query.has('partNumber') ? 'Unsupported' : 'GetObject';
    case 'HEAD':
      return query.has('partNumber') ? 'Unsupported' : 'HeadObject';
    case 'DELETE':
      return inUpload ? 'AbortMultipartUpload' : 'DeleteObject';
    default:
      return 'Unsupported';
  }
}

// ignoreBOM keeps a leading U+FEFF as part of the key instead of silently dropping it.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Percent-decodes a path segment into bytes and reads them as UTF-8; undefined when an escape is
 * malformed or the bytes are not valid UTF-8 (S3 answers both with 400 InvalidURI).
 */
export function percentDecode(raw: string): string | undefined {
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const ch = raw.charCodeAt(i);
    if (ch === 0x25 /* % */) {
      const hex = raw.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else if (ch < 0x100) {
      // Node hands over raw request-target bytes as latin1 characters.
      bytes.push(ch);
    } else {
      bytes.push(...Buffer.from(raw[i]!, 'utf8'));
    }
  }
  try {
    return utf8.decode(Uint8Array.from(bytes));
  } catch {
    return undefined;
  }
}
