import type { IncomingHttpHeaders } from 'node:http';
import { s3Error } from './errors.js';
import { header } from './headers.js';

/**
 * What an upload request says about the object besides its bytes: Content-Type, user metadata and
 * the standard headers S3 keeps. PutObject, CreateMultipartUpload and a CopyObject with
 * `x-amz-metadata-directive: REPLACE` all take them from their request headers.
 */
export interface ObjectProperties {
  readonly contentType: string;
  /** User metadata from `x-amz-meta-*` headers: names lower-cased, without the prefix. */
  readonly metadata: Readonly<Record<string, string>>;
  /** Cache-Control, Content-Disposition, Content-Encoding, Content-Language and Expires, when given. */
  readonly standardHeaders: Readonly<Record<string, string>>;
}

const STANDARD_HEADERS = ['cache-control', 'content-disposition', 'content-language', 'expires'] as const;
/** S3's limit on the user metadata of one object (names plus values). */
const MAX_METADATA_BYTES = 2048;

/** The properties the request headers give; MetadataTooLarge when the user metadata exceeds 2 KB. */
export function objectProperties(headers: IncomingHttpHeaders): ObjectProperties {
  return {
    contentType: header(headers, 'content-type') ?? 'binary/octet-stream',
    metadata: userMetadata(headers),
    standardHeaders: storedStandardHeaders(headers),
  };
}

function userMetadata(headers: IncomingHttpHeaders): Record<string, string> {
  const metadata: Record<string, string> = {};
  let size = 0;
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith('x-amz-meta-') || value === undefined) continue;
    const text = Array.isArray(value) ? value.join(',') : value;
    const short = name.slice('x-amz-meta-'.length);
    metadata[short] = text;
    size += Buffer.byteLength(short) + Buffer.byteLength(text);
  }
  if (size > MAX_METADATA_BYTES) {
    throw s3Error('MetadataTooLarge', { extra: { MaxSizeAllowed: String(MAX_METADATA_BYTES) } });
  }
  return metadata;
}

function storedStandardHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const stored: Record<string, string> = {};
  for (const name of STANDARD_HEADERS) {
    const value = header(headers, name);
    if (value !== undefined) stored[name] = value;
  }
  // aws-chunked describes the transfer, not the object; any other coding is the object's own.
  const encoding = (header(headers, 'content-encoding') ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '' && e.toLowerCase() !== 'aws-chunked')
    .join(',');
  if (encoding !== '') stored['content-encoding'] = encoding;
  return stored;
}
