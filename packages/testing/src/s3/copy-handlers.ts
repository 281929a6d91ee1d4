import type { IncomingHttpHeaders } from 'node:http';
import type { StoredObject } from './bucket-store.js';
import {
  CHECKSUM_ALGORITHMS,
  computeChecksum,
  md5Hex,
  type ObjectChecksum,
  parseChecksumAlgorithm,
} from './checksums.js';
import { assertNoConflict, evaluateWriteConditions, parseWriteConditions } from './conditions.js';
import { bucketName, objectKey, type RequestContext, type S3Response, xmlResponse } from './context.js';
import { copySourceRange, readCopySource } from './copy-source.js';
import { s3Error } from './errors.js';
import { header } from './headers.js';
import { parsePartNumber } from './multipart-upload.js';
import { type ObjectProperties, objectProperties } from './object-properties.js';
import { xmlElement, xmlRoot } from './xml.js';

/**
 * CopyObject (`PUT /b/k` with `x-amz-copy-source`) and UploadPartCopy (the same with `partNumber` and
 * `uploadId`). The source is read at once, so a copy is one atomic step like any other write.
 */

export async function copyObject(ctx: RequestContext): Promise<S3Response> {
  const { req, config } = ctx;
  const name = bucketName(ctx);
  const key = objectKey(ctx);
  const bucket = ctx.store.require(name);
  const replace = metadataDirective(req.headers) === 'REPLACE';
  const conditions = config.conditionalWrites ? parseWriteConditions('CopyObject', req.headers) : undefined;
  const algorithm = requestedChecksumAlgorithm(req.headers);
  const { source, object: from } = readCopySource(ctx.store, req.headers);
  // Only what this server emulates can change in place: the metadata (or the checksum algorithm).
  if (source.bucket === name && source.key === key && !replace && algorithm === undefined) {
    throw s3Error('InvalidRequest', {
      message:
        "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.",
    });
  }
  const properties: ObjectProperties = replace
    ? objectProperties(req.headers)
    : { contentType: from.contentType, metadata: from.metadata, standardHeaders: from.standardHeaders };
  if (conditions) {
    assertNoConflict(ctx, bucket, key);
    evaluateWriteConditions(conditions, bucket.get(key), { bucket: name, key });
  }
  const checksum = copiedChecksum(from, algorithm);
  const object: StoredObject = {
    key,
    body: from.body,
    // The copy is one single-part object, even of a multipart source: its ETag is the body's MD5.
    etag: `"${md5Hex(from.body)}"`,
    lastModified: new Date(),
    ...properties,
    ...(checksum ? { checksum } : {}),
  };
  bucket.put(object);

  return xmlResponse(
    xmlRoot('CopyObjectResult', [
      xmlElement('ETag', object.etag),
      xmlElement('LastModified', object.lastModified.toISOString()),
      ...(checksum
        ? [
            xmlElement(`Checksum${checksum.algorithm}`, checksum.value),
            xmlElement('ChecksumType', checksum.type),
          ]
        : []),
    ]),
  );
}

/** `x-amz-metadata-directive`: COPY (the default) keeps the source's metadata, REPLACE takes the request's. */
function metadataDirective(headers: IncomingHttpHeaders): 'COPY' | 'REPLACE' {
  const value = header(headers, 'x-amz-metadata-directive');
  if (value === undefined) return 'COPY';
  const directive = value.trim().toUpperCase();
  if (directive !== 'COPY' && directive !== 'REPLACE') {
    throw s3Error('InvalidArgument', {
      message: 'Unknown metadata directive.',
      extra: { ArgumentName: 'x-amz-metadata-directive', ArgumentValue: value },
    });
  }
  return directive;
}

function requestedChecksumAlgorithm(headers: IncomingHttpHeaders) {
  const value = header(headers, 'x-amz-checksum-algorithm');
  if (value === undefined) return undefined;
  const algorithm = parseChecksumAlgorithm(value);
  if (!algorithm) {
    throw s3Error('InvalidRequest', {
      message: `Checksum algorithm provided is unsupported. Please try again with any of the valid types: [${CHECKSUM_ALGORITHMS.join(', ')}]`,
    });
  }
  return algorithm;
}

/**
 * The copy's checksum covers its whole body: of the requested algorithm, else of the algorithm the
 * source had (a multipart source's COMPOSITE value does not describe a single-part copy).
 */
function copiedChecksum(
  source: StoredObject,
  requested: ObjectChecksum['algorithm'] | undefined,
): ObjectChecksum | undefined {
  const algorithm = requested ?? source.checksum?.algorithm;
  if (algorithm === undefined) return undefined;
  if (source.checksum?.algorithm === algorithm && source.checksum.type === 'FULL_OBJECT')
    return source.checksum;
  return { algorithm, value: computeChecksum(algorithm, source.body), type: 'FULL_OBJECT' };
}

export async function uploadPartCopy(ctx: RequestContext): Promise<S3Response> {
  const { req, route } = ctx;
  const partNumber = parsePartNumber(route.query.get('partNumber'));
  const upload = ctx.store
    .require(bucketName(ctx))
    .requireUpload(route.query.get('uploadId'), objectKey(ctx));
  const { object: from } = readCopySource(ctx.store, req.headers);
  const range = copySourceRange(header(req.headers, 'x-amz-copy-source-range'), from.body.length);
  const body = range ? from.body.subarray(range.start, range.end + 1) : from.body;
  const part = upload.putPart(partNumber, body, undefined);
  return xmlResponse(
    xmlRoot('CopyPartResult', [
      xmlElement('ETag', part.etag),
      xmlElement('LastModified', part.lastModified.toISOString()),
      ...(part.checksum ? [xmlElement(`Checksum${part.checksum.algorithm}`, part.checksum.value)] : []),
    ]),
  );
}
