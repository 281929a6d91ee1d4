import { bucketName, objectKey, type RequestContext, type S3Response, xmlResponse } from './context.js';
import { s3Error } from './errors.js';
import { xmlRoot } from './xml.js';

/**
 * GetObjectTagging of an object: always an empty tag set, since this server keeps no tags
 * (`x-amz-tagging` on writes is ignored). Clients that copy an object with its tags ask for them
 * first, as the AWS CLI does before a multipart copy, and must not fail on that question.
 */
export async function getObjectTagging(ctx: RequestContext): Promise<S3Response> {
  const bucket = ctx.store.require(bucketName(ctx));
  const key = objectKey(ctx);
  if (!bucket.get(key)) throw s3Error('NoSuchKey', { key });
  return xmlResponse(xmlRoot('Tagging', ['<TagSet></TagSet>']));
}
