import { type LeaseStrategy, leaseStrategy } from '../engine/lease-engine.js';
import type { ListBucket } from '../engine/list/list-bucket.js';
import { ENTRY_SUFFIX_BYTES } from '../engine/list/list-entries.js';
import { ListLeaseEngine } from '../engine/list/list-lease-engine.js';
import { LockConfigError } from '../shared/errors.js';
import { checkKeyBytes, describe } from '../shared/validation.js';
import { verifyListing } from '../verify/verify-listing.js';
import { trackAttempts } from './aws-attempts.js';
import type { S3ClientLike } from './aws-client.js';
import { classifyAwsError } from './aws-error-kind.js';
import { toLockStoreError } from './aws-errors.js';
import { checkS3Location, S3_KEY_BYTES, type S3Location, s3Operations } from './s3-location.js';
import { loadS3Sdk } from './s3-sdk.js';

export interface S3ListStoreOptions {
  /** Your S3 client (region, credentials, endpoint are yours to configure). */
  client: S3ClientLike;
  /** An existing bucket. Latch never creates buckets. */
  bucket: string;
  /** Prepended to every object key, e.g. 'locks/' (default ''). */
  prefix?: string;
  /**
   * How long an upload may take, in ms (default 500). An upload that took longer is withdrawn,
   * and a contender lists only once this long has passed since its attempt began, so no object
   * that sorts before it can still appear. Every client of one lock must use the same value.
   */
  settleMs?: number;
}

const S3_LIST_STORE_OPTIONS: Record<keyof S3ListStoreOptions, true> = {
  client: true,
  bucket: true,
  prefix: true,
  settleMs: true,
};
const S3_LIST_STORE_OPTION_KEYS = Object.keys(S3_LIST_STORE_OPTIONS);

const DEFAULT_SETTLE_MS = 500;
const LARGEST_SETTLE_MS = 60_000;

/**
 * Locks on S3-compatible stores without conditional writes: the list-ordered strategy (plain
 * PutObject, ListObjectsV2, GetObject, DeleteObject). Weaker than s3Store: see the README.
 */
export function s3ListStore(options: S3ListStoreOptions): LeaseStrategy {
  const { client, bucket, prefix, settleMs } = checkOptions(options);
  const op = s3Operations('s3ListStore', bucket);

  const objects: ListBucket = {
    checkName(name) {
      checkKeyBytes(
        prefix + name,
        S3_KEY_BYTES - ENTRY_SUFFIX_BYTES,
        `the S3 list strategy (with the prefix ${JSON.stringify(prefix)}, leaving ${ENTRY_SUFFIX_BYTES} bytes for ".<created>.<uuid>.<expires>")`,
      );
    },

    async put(objectKey, body) {
      const { PutObjectCommand } = await loadS3Sdk();
      try {
        await client.send(
          trackAttempts(
            new PutObjectCommand({
              Bucket: bucket,
              Key: prefix + objectKey,
              Body: body,
              ContentType: 'application/json',
            }),
          ),
        );
      } catch (error) {
        throw toLockStoreError(error, op('PutObject', objectKey, true));
      }
    },

    async list(listPrefix) {
      const { ListObjectsV2Command } = await loadS3Sdk();
      const keys: string[] = [];
      let token: string | undefined;
      do {
        try {
          const page = await client.send(
            new ListObjectsV2Command({
              Bucket: bucket,
              Prefix: prefix + listPrefix,
              ContinuationToken: token,
            }),
          );
          for (const object of page.Contents ?? []) {
            if (object.Key?.startsWith(prefix)) keys.push(object.Key.slice(prefix.length));
          }
          token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } catch (error) {
          throw toLockStoreError(error, op('ListObjectsV2', listPrefix, false));
        }
      } while (token);
      return keys;
    },

    async get(objectKey) {
      const { GetObjectCommand } = await loadS3Sdk();
      try {
        const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: prefix + objectKey }));
        return res.Body ? await res.Body.transformToString('utf-8') : '';
      } catch (error) {
        if (classifyAwsError(error) === 'missing-object') return null;
        throw toLockStoreError(error, op('GetObject', objectKey, false));
      }
    },

    async delete(objectKey) {
      const { DeleteObjectCommand } = await loadS3Sdk();
      try {
        await client.send(
          trackAttempts(new DeleteObjectCommand({ Bucket: bucket, Key: prefix + objectKey })),
        );
      } catch (error) {
        // Some S3-compatible stores answer 404 for a missing object: it is gone either way.
        if (classifyAwsError(error) === 'missing-object') return;
        throw toLockStoreError(error, op('DeleteObject', objectKey, true));
      }
    },
  };

  return leaseStrategy(
    's3-list',
    (environment) => new ListLeaseEngine(objects, environment, settleMs),
    () => verifyListing(objects, 's3-list'),
  );
}

function checkOptions(options: S3ListStoreOptions): S3Location & { settleMs: number } {
  const location = checkS3Location('s3ListStore', options, S3_LIST_STORE_OPTION_KEYS);
  const prefixBytes = Buffer.byteLength(location.prefix, 'utf8');
  if (prefixBytes >= S3_KEY_BYTES - ENTRY_SUFFIX_BYTES) {
    throw new LockConfigError(
      `s3ListStore \`prefix\` is ${prefixBytes} bytes in UTF-8; with the ${ENTRY_SUFFIX_BYTES} bytes the strategy appends, S3 object keys would pass ${S3_KEY_BYTES}.`,
    );
  }
  const { settleMs = DEFAULT_SETTLE_MS } = options;
  if (
    typeof settleMs !== 'number' ||
    !Number.isFinite(settleMs) ||
    settleMs < 1 ||
    settleMs > LARGEST_SETTLE_MS
  ) {
    throw new LockConfigError(
      `s3ListStore \`settleMs\` must be a number of milliseconds from 1 to ${LARGEST_SETTLE_MS}, got ${describe(settleMs)}. It bounds how long an upload may take (default ${DEFAULT_SETTLE_MS}).`,
    );
  }
  return { ...location, settleMs };
}
