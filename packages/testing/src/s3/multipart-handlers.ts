import type { IncomingHttpHeaders } from 'node:http';
import { accountElement, keyEncoding } from './bucket-handlers.js';
import type { StoredObject } from './bucket-store.js';
import { CHECKSUM_ALGORITHMS, parseChecksumAlgorithm, parseChecksumType } from './checksums.js';
import { assertNoConflict, conflicts, evaluateWriteConditions, parseWriteConditions } from './conditions.js';
import {
  bucketName,
  type HandlerConfig,
  objectKey,
  type RequestContext,
  type S3Response,
  xmlResponse,
} from './context.js';
import { s3Error } from './errors.js';
import { header } from './headers.js';
import { parseMaxKeys, urlEncodeKey } from './list.js';
import { MAX_COMPLETE_BODY, parseCompleteRequest, selectParts } from './multipart-complete.js';
import {
  MAX_PART_SIZE,
  MultipartUpload,
  multipartEtag,
  parsePartNumber,
  partChecksumHeaders,
  type UploadChecksum,
  type UploadedPart,
} from './multipart-upload.js';
import { objectProperties } from './object-properties.js';
import { planPayload, readPayload, requireLength } from './payload.js';
import { listUploadsPage } from './upload-list.js';
import { xmlElement, xmlRoot } from './xml.js';

/**
 * Multipart upload: CreateMultipartUpload, UploadPart, CompleteMultipartUpload, AbortMultipartUpload,
 * ListParts and ListMultipartUploads. Uploads live in their bucket until completed or aborted.
 */

export async function createMultipartUpload(ctx: RequestContext): Promise<S3Response> {
  const bucket = ctx.store.require(bucketName(ctx));
  const key = objectKey(ctx);
  const checksum = uploadChecksum(ctx.req.headers);
  const upload = new MultipartUpload(key, objectProperties(ctx.req.headers), checksum);
  bucket.addUpload(upload);
  const response = xmlResponse(
    xmlRoot('InitiateMultipartUploadResult', [
      xmlElement('Bucket', bucket.name),
      xmlElement('Key', key),
      xmlElement('UploadId', upload.id),
    ]),
  );
  if (checksum) {
    response.headers = {
      ...response.headers,
      'x-amz-checksum-algorithm': checksum.algorithm,
      'x-amz-checksum-type': checksum.type,
    };
  }
  return response;
}

/**
 * `x-amz-checksum-algorithm` and `x-amz-checksum-type` of CreateMultipartUpload. S3 allows COMPOSITE
 * for CRC32, CRC32C, SHA1 and SHA256 (their default), and FULL_OBJECT for the CRCs (CRC64NVME's only
 * and default type).
 */
function uploadChecksum(headers: IncomingHttpHeaders): UploadChecksum | undefined {
  const algorithmName = header(headers, 'x-amz-checksum-algorithm');
  const typeName = header(headers, 'x-amz-checksum-type');
  if (algorithmName === undefined) {
    if (typeName !== undefined) {
      throw s3Error('InvalidRequest', {
        message: 'The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.',
      });
    }
    return undefined;
  }
  const algorithm = parseChecksumAlgorithm(algorithmName);
  if (!algorithm) {
    throw s3Error('InvalidRequest', {
      message: `Checksum algorithm provided is unsupported. Please try again with any of the valid types: [${CHECKSUM_ALGORITHMS.join(', ')}]`,
    });
  }
  const type = typeName === undefined ? undefined : parseChecksumType(typeName);
  if (typeName !== undefined && !type) {
    throw s3Error('InvalidRequest', { message: 'Value for x-amz-checksum-type header is invalid.' });
  }
  const resolved = type ?? (algorithm === 'CRC64NVME' ? 'FULL_OBJECT' : 'COMPOSITE');
  const supported = resolved === 'FULL_OBJECT' ? algorithm.startsWith('CRC') : algorithm !== 'CRC64NVME';
  if (!supported) {
    throw s3Error('InvalidRequest', {
      message: `The ${resolved} checksum type cannot be used with the ${algorithm.toLowerCase()} checksum algorithm.`,
    });
  }
  return { algorithm, type: resolved };
}

/**
 * The largest part one UploadPart takes: S3's 5 GiB, or the server's `maxObjectSize` when smaller,
 * since that option bounds every request body. The assembled object is not limited by it.
 */
function maxPartSize(config: HandlerConfig): number {
  return Math.min(config.maxObjectSize, MAX_PART_SIZE);
}

export async function uploadPart(ctx: RequestContext): Promise<S3Response> {
  const { req, route } = ctx;
  const name = bucketName(ctx);
  const key = objectKey(ctx);
  const partNumber = parsePartNumber(route.query.get('partNumber'));
  ctx.store.require(name).requireUpload(route.query.get('uploadId'), key); // before taking any body
  const limit = maxPartSize(ctx.config);
  const plan = planPayload(req.headers, limit);
  requireLength(plan, req.headers);
  const payload = await readPayload(req, plan, limit);
  // Looked up again: the upload may have been completed or aborted while the part was arriving.
  const upload = ctx.store.require(name).requireUpload(route.query.get('uploadId'), key);
  const part = upload.putPart(partNumber, payload.body, payload.checksum);
  return { status: 200, headers: { etag: part.etag, ...partChecksumHeaders(part) } };
}

export async function completeMultipartUpload(ctx: RequestContext): Promise<S3Response> {
  const { req, config, route } = ctx;
  const name = bucketName(ctx);
  const key = objectKey(ctx);
  const uploadId = route.query.get('uploadId');
  const conditions = config.conditionalWrites
    ? parseWriteConditions('CompleteMultipartUpload', req.headers)
    : undefined;
  ctx.store.require(name).requireUpload(uploadId, key);
  const plan = planPayload(req.headers, MAX_COMPLETE_BODY);
  const { body } = await readPayload(req, plan, MAX_COMPLETE_BODY);
  const requested = parseCompleteRequest(body);

  // Commit. Nothing below awaits, so checking the parts and the preconditions and storing the object
  // is one atomic step with respect to every other request.
  const bucket = ctx.store.require(name);
  const upload = bucket.requireUpload(uploadId, key);
  const parts = selectParts(upload, requested);
  if (conditions) {
    // S3 tells a client that gets 409 here to start the upload over: the upload is gone.
    if (conflicts(ctx, bucket, key)) bucket.removeUpload(upload.id);
    assertNoConflict(ctx, bucket, key);
    // 412 and 404 leave the upload in place, to be completed later or aborted.
    evaluateWriteConditions(conditions, bucket.get(key), { bucket: name, key });
  }
  const objectBody = Buffer.concat(parts.map((p) => p.body));
  const checksum = upload.objectChecksum(parts, objectBody);
  const object: StoredObject = {
    key,
    body: objectBody,
    etag: multipartEtag(parts),
    lastModified: new Date(),
    ...upload.properties,
    ...(checksum ? { checksum } : {}),
  };
  bucket.put(object);
  bucket.removeUpload(upload.id);

  const location = `http://${header(req.headers, 'host') ?? 'localhost'}/${name}/${urlEncodeKey(key)}`;
  const checksumElements = checksum
    ? [xmlElement(`Checksum${checksum.algorithm}`, checksum.value), xmlElement('ChecksumType', checksum.type)]
    : [];
  return xmlResponse(
    xmlRoot('CompleteMultipartUploadResult', [
      xmlElement('Location', location),
      xmlElement('Bucket', name),
      xmlElement('Key', key),
      xmlElement('ETag', object.etag),
      ...checksumElements,
    ]),
  );
}

export async function abortMultipartUpload(ctx: RequestContext): Promise<S3Response> {
  const bucket = ctx.store.require(bucketName(ctx));
  const upload = bucket.requireUpload(ctx.route.query.get('uploadId'), objectKey(ctx));
  bucket.removeUpload(upload.id);
  return { status: 204 };
}

export async function listParts(ctx: RequestContext): Promise<S3Response> {
  const q = ctx.route.query;
  const bucket = ctx.store.require(bucketName(ctx));
  const upload = bucket.requireUpload(q.get('uploadId'), objectKey(ctx));
  const maxParts = parseMaxKeys(q.get('max-parts'), 'max-parts');
  const marker = parsePartNumberMarker(q.get('part-number-marker'));
  const after = upload.sortedParts().filter((p) => p.partNumber > marker);
  const page = after.slice(0, maxParts);
  const isTruncated = after.length > page.length;
  const checksumElements = upload.checksum
    ? [
        xmlElement('ChecksumAlgorithm', upload.checksum.algorithm),
        xmlElement('ChecksumType', upload.checksum.type),
      ]
    : [];
  return xmlResponse(
    xmlRoot('ListPartsResult', [
      xmlElement('Bucket', bucket.name),
      xmlElement('Key', upload.key),
      xmlElement('UploadId', upload.id),
      accountElement('Initiator'),
      accountElement('Owner'),
      xmlElement('StorageClass', 'STANDARD'),
      xmlElement('PartNumberMarker', marker),
      xmlElement('NextPartNumberMarker', page.at(-1)?.partNumber ?? marker),
      xmlElement('MaxParts', maxParts),
      xmlElement('IsTruncated', isTruncated),
      ...page.map(partElement),
      ...checksumElements,
    ]),
  );
}

function partElement(part: UploadedPart): string {
  return xmlElement('Part', [
    xmlElement('PartNumber', part.partNumber),
    xmlElement('LastModified', part.lastModified.toISOString()),
    xmlElement('ETag', part.etag),
    xmlElement('Size', part.body.length),
    ...(part.checksum ? [xmlElement(`Checksum${part.checksum.algorithm}`, part.checksum.value)] : []),
  ]);
}

function parsePartNumberMarker(value: string | null): number {
  if (value === null || value === '') return 0;
  if (!/^\d{1,9}$/.test(value)) {
    throw s3Error('InvalidArgument', {
      message: 'Provided part-number-marker not an integer or within integer range',
      extra: { ArgumentName: 'part-number-marker', ArgumentValue: value },
    });
  }
  return Number(value);
}

export async function listMultipartUploads(ctx: RequestContext): Promise<S3Response> {
  const q = ctx.route.query;
  const bucket = ctx.store.require(bucketName(ctx));
  const { encodingType, encode } = keyEncoding(q);
  const query = {
    prefix: q.get('prefix') ?? '',
    delimiter: q.get('delimiter') ?? '',
    maxUploads: parseMaxKeys(q.get('max-uploads'), 'max-uploads'),
    keyMarker: q.get('key-marker') ?? '',
    uploadIdMarker: q.get('upload-id-marker') ?? '',
  };
  const page = listUploadsPage(bucket, query);
  const uploads = page.uploads.map((upload) =>
    xmlElement('Upload', [
      xmlElement('Key', encode(upload.key)),
      xmlElement('UploadId', upload.id),
      accountElement('Initiator'),
      accountElement('Owner'),
      xmlElement('StorageClass', 'STANDARD'),
      xmlElement('Initiated', upload.initiated.toISOString()),
      ...(upload.checksum
        ? [
            xmlElement('ChecksumAlgorithm', upload.checksum.algorithm),
            xmlElement('ChecksumType', upload.checksum.type),
          ]
        : []),
    ]),
  );
  const prefixes = page.commonPrefixes.map((p) =>
    xmlElement('CommonPrefixes', [xmlElement('Prefix', encode(p))]),
  );
  return xmlResponse(
    xmlRoot('ListMultipartUploadsResult', [
      xmlElement('Bucket', bucket.name),
      xmlElement('KeyMarker', encode(query.keyMarker)),
      xmlElement('UploadIdMarker', query.uploadIdMarker),
      ...(page.nextKeyMarker !== undefined ? [xmlElement('NextKeyMarker', encode(page.nextKeyMarker))] : []),
      ...(page.nextUploadIdMarker !== undefined
        ? [xmlElement('NextUploadIdMarker', page.nextUploadIdMarker)]
        : []),
      ...(query.delimiter !== '' ? [xmlElement('Delimiter', encode(query.delimiter))] : []),
      xmlElement('Prefix', encode(query.prefix)),
      xmlElement('MaxUploads', query.maxUploads),
      ...(encodingType ? [xmlElement('EncodingType', encodingType)] : []),
      xmlElement('IsTruncated', page.isTruncated),
      ...uploads,
      ...prefixes,
    ]),
  );
}
