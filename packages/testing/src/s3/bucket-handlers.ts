import { isValidBucketName } from './bucket-store.js';
import { bucketName, parseXmlBody, type RequestContext, type S3Response, xmlResponse } from './context.js';
import { s3Error } from './errors.js';
import {
  decodeContinuationToken,
  encodeContinuationToken,
  type ListPage,
  listPage,
  parseMaxKeys,
  urlEncodeKey,
} from './list.js';
import { planPayload, readPayload } from './payload.js';
import { childText, xmlElement, xmlRoot } from './xml.js';

/** `<Owner>` (or `<Initiator>`): the one account this server has. */
export function accountElement(name: 'Owner' | 'Initiator'): string {
  return xmlElement(name, [xmlElement('ID', 'latch-testing'), xmlElement('DisplayName', 'latch-testing')]);
}

const OWNER = accountElement('Owner');
const MAX_CONFIGURATION_BODY = 64 * 1024;

export async function createBucket(ctx: RequestContext): Promise<S3Response> {
  const name = bucketName(ctx);
  if (!isValidBucketName(name)) throw s3Error('InvalidBucketName', { bucket: name });
  const plan = planPayload(ctx.req.headers, MAX_CONFIGURATION_BODY);
  const { body } = await readPayload(ctx.req, plan, MAX_CONFIGURATION_BODY);
  if (body.toString('utf8').trim() !== '') {
    const root = parseXmlBody(body, 'CreateBucketConfiguration');
    const location = childText(root, 'LocationConstraint')?.trim();
    // Leniency: naming this server's own region is accepted even for us-east-1.
    if (location !== undefined && location !== '' && location !== ctx.config.region) {
      throw s3Error('IllegalLocationConstraintException', { bucket: name });
    }
  }
  // Re-creating a bucket you own: S3 in us-east-1 answers 200 for legacy reasons (and leaves the
  // bucket's contents alone); every other region answers 409 BucketAlreadyOwnedByYou.
  if (!(ctx.store.get(name) && ctx.config.region === 'us-east-1')) ctx.store.create(name);
  return { status: 200, headers: { location: `/${name}` } };
}

export async function headBucket(ctx: RequestContext): Promise<S3Response> {
  ctx.store.require(bucketName(ctx));
  return { status: 200, headers: { 'x-amz-bucket-region': ctx.config.region } };
}

export async function deleteBucket(ctx: RequestContext): Promise<S3Response> {
  ctx.store.delete(bucketName(ctx));
  return { status: 204 };
}

export async function getBucketLocation(ctx: RequestContext): Promise<S3Response> {
  ctx.store.require(bucketName(ctx));
  // S3 reports its oldest region as an empty constraint.
  const region = ctx.config.region === 'us-east-1' ? '' : ctx.config.region;
  return xmlResponse(xmlRoot('LocationConstraint', [region]));
}

export async function listBuckets(ctx: RequestContext): Promise<S3Response> {
  const buckets = ctx.store
    .list()
    .map((b) =>
      xmlElement('Bucket', [
        xmlElement('Name', b.name),
        xmlElement('CreationDate', b.createdAt.toISOString()),
        xmlElement('BucketRegion', ctx.config.region),
      ]),
    );
  return xmlResponse(xmlRoot('ListAllMyBucketsResult', [OWNER, xmlElement('Buckets', buckets)]));
}

/** `encoding-type`: absent, or `url` (keys go out percent-encoded); anything else is InvalidArgument. */
export function keyEncoding(query: URLSearchParams) {
  const encodingType = query.get('encoding-type');
  if (encodingType !== null && encodingType !== 'url') {
    throw s3Error('InvalidArgument', {
      message: 'Invalid Encoding Method specified in Request',
      extra: { ArgumentName: 'encoding-type', ArgumentValue: encodingType },
    });
  }
  return { encodingType, encode: encodingType === 'url' ? urlEncodeKey : (s: string) => s };
}

/** Shared query handling of both listing flavours. */
function listingBasics(ctx: RequestContext) {
  const q = ctx.route.query;
  const { encodingType, encode } = keyEncoding(q);
  return {
    bucket: ctx.store.require(bucketName(ctx)),
    prefix: q.get('prefix') ?? '',
    delimiter: q.get('delimiter') ?? '',
    maxKeys: parseMaxKeys(q.get('max-keys')),
    encodingType,
    encode,
  };
}

function pageEntries(page: ListPage, encode: (s: string) => string): string[] {
  const contents = page.objects.map((o) =>
    xmlElement('Contents', [
      xmlElement('Key', encode(o.key)),
      xmlElement('LastModified', o.lastModified.toISOString()),
      xmlElement('ETag', o.etag),
      ...(o.checksum
        ? [xmlElement('ChecksumAlgorithm', o.checksum.algorithm), xmlElement('ChecksumType', o.checksum.type)]
        : []),
      xmlElement('Size', o.body.length),
      xmlElement('StorageClass', 'STANDARD'),
    ]),
  );
  const prefixes = page.commonPrefixes.map((p) =>
    xmlElement('CommonPrefixes', [xmlElement('Prefix', encode(p))]),
  );
  return [...contents, ...prefixes];
}

export async function listObjectsV2(ctx: RequestContext): Promise<S3Response> {
  const q = ctx.route.query;
  if (q.get('list-type') !== '2') {
    throw s3Error('InvalidArgument', { message: 'Invalid list-type', extra: { ArgumentName: 'list-type' } });
  }
  const { bucket, prefix, delimiter, maxKeys, encodingType, encode } = listingBasics(ctx);
  const token = q.get('continuation-token');
  const startAfter = q.get('start-after');
  // A continuation token supersedes start-after: it already lies past it.
  const after = token !== null ? decodeContinuationToken(token) : (startAfter ?? undefined);
  const page = listPage(bucket, { prefix, delimiter, maxKeys, ...(after !== undefined ? { after } : {}) });
  if (ctx.config.personality.unorderedListings) page.objects.reverse();
  const children = [
    xmlElement('Name', bucket.name),
    xmlElement('Prefix', encode(prefix)),
    ...(delimiter !== '' ? [xmlElement('Delimiter', encode(delimiter))] : []),
    xmlElement('MaxKeys', maxKeys),
    ...(encodingType ? [xmlElement('EncodingType', encodingType)] : []),
    xmlElement('KeyCount', page.objects.length + page.commonPrefixes.length),
    xmlElement('IsTruncated', page.isTruncated),
    ...(token !== null ? [xmlElement('ContinuationToken', token)] : []),
    ...(page.isTruncated && page.last !== undefined
      ? [xmlElement('NextContinuationToken', encodeContinuationToken(page.last))]
      : []),
    ...(startAfter !== null ? [xmlElement('StartAfter', encode(startAfter))] : []),
    ...pageEntries(page, encode),
  ];
  return xmlResponse(xmlRoot('ListBucketResult', children));
}

/** The original ListObjects (v1), which some clients still use: marker-based paging. */
export async function listObjects(ctx: RequestContext): Promise<S3Response> {
  const { bucket, prefix, delimiter, maxKeys, encodingType, encode } = listingBasics(ctx);
  const marker = ctx.route.query.get('marker') ?? '';
  const page = listPage(bucket, { prefix, delimiter, maxKeys, ...(marker !== '' ? { after: marker } : {}) });
  const children = [
    xmlElement('Name', bucket.name),
    xmlElement('Prefix', encode(prefix)),
    xmlElement('Marker', encode(marker)),
    xmlElement('MaxKeys', maxKeys),
    ...(delimiter !== '' ? [xmlElement('Delimiter', encode(delimiter))] : []),
    ...(encodingType ? [xmlElement('EncodingType', encodingType)] : []),
    xmlElement('IsTruncated', page.isTruncated),
    // Like S3, NextMarker is only sent with a delimiter; without one the last key is the marker.
    ...(page.isTruncated && delimiter !== '' && page.last !== undefined
      ? [xmlElement('NextMarker', encode(page.last))]
      : []),
    ...pageEntries(page, encode),
  ];
  return xmlResponse(xmlRoot('ListBucketResult', children));
}
