import type { Bucket } from './bucket-store.js';
import type { MultipartUpload } from './multipart-upload.js';

/**
 * ListMultipartUploads paging. Uploads come out by key (in UTF-8 byte order, as objects are listed),
 * uploads of one key in the order they were created. `key-marker` alone resumes after every upload of
 * that key; with `upload-id-marker` it resumes after that upload of the key. With a delimiter, keys
 * sharing a prefix up to the delimiter roll up into one CommonPrefix, which counts as one entry.
 */

export interface UploadListQuery {
  prefix: string;
  /** Empty string means no delimiter. */
  delimiter: string;
  maxUploads: number;
  keyMarker: string;
  uploadIdMarker: string;
}

export interface UploadListPage {
  uploads: MultipartUpload[];
  commonPrefixes: string[];
  isTruncated: boolean;
  /** Where the next page starts, when this one is truncated. */
  nextKeyMarker?: string;
  nextUploadIdMarker?: string;
}

export function listUploadsPage(bucket: Bucket, query: UploadListQuery): UploadListPage {
  const page: UploadListPage = { uploads: [], commonPrefixes: [], isTruncated: false };
  if (query.maxUploads === 0) return page;
  const prefix = Buffer.from(query.prefix, 'utf8');
  const marker = Buffer.from(query.keyMarker, 'utf8');
  const sorted = bucket
    .pendingUploads()
    .map((upload) => ({ upload, bytes: Buffer.from(upload.key, 'utf8') }))
    .filter((e) => startsWith(e.bytes, prefix))
    .sort((a, b) => Buffer.compare(a.bytes, b.bytes)); // stable: one key's uploads stay in creation order
  let start = 0;
  if (query.keyMarker !== '') {
    const markerUpload = sorted.findIndex(
      (e) => e.bytes.equals(marker) && e.upload.id === query.uploadIdMarker,
    );
    start =
      query.uploadIdMarker !== '' && markerUpload >= 0
        ? markerUpload + 1
        : sorted.findIndex((e) => Buffer.compare(e.bytes, marker) > 0);
    if (start < 0) start = sorted.length;
  }

  let count = 0;
  let lastPrefix: string | undefined;
  for (let i = start; i < sorted.length; i++) {
    const { upload, bytes } = sorted[i]!;
    const cut = query.delimiter === '' ? -1 : bytes.indexOf(query.delimiter, prefix.length, 'utf8');
    const common =
      cut >= 0 ? bytes.subarray(0, cut + Buffer.byteLength(query.delimiter)).toString('utf8') : undefined;
    if (common !== undefined && (common === lastPrefix || common === query.keyMarker)) continue;
    if (count === query.maxUploads) {
      page.isTruncated = true;
      break;
    }
    count++;
    if (common !== undefined) {
      page.commonPrefixes.push(common);
      lastPrefix = common;
      page.nextKeyMarker = common;
      delete page.nextUploadIdMarker;
    } else {
      page.uploads.push(upload);
      page.nextKeyMarker = upload.key;
      page.nextUploadIdMarker = upload.id;
    }
  }
  if (!page.isTruncated) {
    delete page.nextKeyMarker;
    delete page.nextUploadIdMarker;
  }
  return page;
}

function startsWith(bytes: Buffer, prefix: Buffer): boolean {
  return bytes.length >= prefix.length && bytes.subarray(0, prefix.length).equals(prefix);
}
