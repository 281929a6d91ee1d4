import type { S3Client } from '@aws-sdk/client-s3';
import { LockConfigError } from '../shared/errors.js';
import { checkOptionKeys } from '../shared/option-keys.js';
import { describe } from '../shared/validation.js';
import { awsOperations } from './aws-errors.js';

/** Longest S3 object key, in UTF-8 bytes. */
export const S3_KEY_BYTES = 1024;

/** Where an S3 store keeps its objects. */
export interface S3Location {
  client: S3Client;
  bucket: string;
  prefix: string;
}

/**
 * Checks the options both S3 stores take (`client`, `bucket`, `prefix`), and that `options`
 * has no key but the store's `known` ones; `factory` names the store in messages. How long the
 * prefix may be depends on what the store appends to it, so each store checks that itself.
 */
export function checkS3Location(factory: string, options: unknown, known: readonly string[]): S3Location {
  if (typeof options !== 'object' || options === null) {
    throw new LockConfigError(`${factory} options must be an object, got ${describe(options)}.`);
  }
  checkOptionKeys(`${factory}()`, options, known);
  const { client, bucket, prefix = '' } = options as Partial<S3Location>;
  if (typeof (client as { send?: unknown } | undefined)?.send !== 'function') {
    throw new LockConfigError(`${factory} needs \`client\`: an S3Client from @aws-sdk/client-s3.`);
  }
  if (typeof bucket !== 'string' || bucket.length === 0) {
    throw new LockConfigError(
      `${factory} needs \`bucket\`: the name of an existing bucket, got ${describe(bucket)}.`,
    );
  }
  checkBucketIsAName(factory, bucket);
  if (typeof prefix !== 'string') {
    throw new LockConfigError(`${factory} \`prefix\` must be a string, got ${describe(prefix)}.`);
  }
  return { client: client as S3Client, bucket, prefix };
}

// A bucket's ARN (no region, no account: arn:aws:s3:::name) or an s3:// URL in place of its name.
// Access point ARNs (with region and account) are left alone: the SDK takes those as `Bucket`.
const BUCKET_ARN = /^arn:[\w-]+:s3:::([^/]+)(?:\/(.*))?$/;
const S3_URL = /^s3:\/\/([^/]+)(?:\/(.*))?$/;

/** Refuses a bucket ARN or s3:// URL, saying which name (and prefix) to pass instead. */
function checkBucketIsAName(factory: string, bucket: string): void {
  const found = BUCKET_ARN.exec(bucket) ?? S3_URL.exec(bucket);
  if (found === null) return;
  const [, name, path] = found;
  const kind = bucket.startsWith('arn:') ? 'an ARN' : 'a URL';
  const prefix = path ? `, prefix: ${JSON.stringify(path.endsWith('/') ? path : `${path}/`)}` : '';
  throw new LockConfigError(
    `${factory} \`bucket\` must be the bucket's name, not ${kind}: got ${JSON.stringify(bucket)}. Pass ${factory}({ bucket: ${JSON.stringify(name)}${prefix} }).`,
  );
}

/** Names the S3 operations of store `factory` on `bucket`, for error messages. */
export function s3Operations(factory: string, bucket: string) {
  return awsOperations('s3', bucket, `Create the bucket, or pass an existing one as ${factory}({ bucket }).`);
}
