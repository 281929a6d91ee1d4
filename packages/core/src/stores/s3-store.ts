import type { ListObjectsV2CommandOutput } from '@aws-sdk/client-s3';
import type { LockRecord, VersionedRecord } from '../contract/lock-record.js';
import type { ListedKey, ListPage, LockStore, WriteCondition, WriteOutcome } from '../contract/lock-store.js';
import { decodeRecord, encodeRecord } from '../contract/record-codec.js';
import { LockConfigError, LockCorruptedError, LockStoreError } from '../shared/errors.js';
import { checkKeyBytes, checkMaxRecordBytes } from '../shared/validation.js';
import { earlierAttemptMayHaveLanded, trackAttempts } from './aws-attempts.js';
import type { S3ClientLike } from './aws-client.js';
import { classifyAwsError } from './aws-error-kind.js';
import { type AwsOperation, toLockStoreError } from './aws-errors.js';
import { checkS3Location, S3_KEY_BYTES, type S3Location, s3Operations } from './s3-location.js';
import { loadS3Sdk } from './s3-sdk.js';
import { recordServerDate } from './server-date.js';
import { checkVerifyOption, type VerifyOption, verifyScopeOf } from './verify-option.js';

export interface S3StoreOptions {
  /** Your S3 client (region, credentials, endpoint are yours to configure). */
  client: S3ClientLike;
  /** An existing bucket. Latch never creates buckets. */
  bucket: string;
  /** Prepended to every lock key to form the object key, e.g. 'locks/' (default ''). */
  prefix?: string;
  /** Largest record (JSON document) accepted, in bytes (default 256 KiB). */
  maxRecordBytes?: number;
  /**
   * Check the store with `verifyStore` before the first lock a LockClient takes on it (once per
   * bucket and prefix in a process, about a dozen requests), and refuse to lock on a store that
   * ignores conditional writes. Default 'auto': when the client's endpoint is not AWS's own
   * (MinIO, R2, GCS, a local server), never against AWS S3, whose conditional writes are known.
   */
  verify?: boolean | 'auto';
}

const S3_STORE_OPTIONS: Record<keyof S3StoreOptions, true> = {
  client: true,
  bucket: true,
  prefix: true,
  maxRecordBytes: true,
  verify: true,
};
const S3_STORE_OPTION_KEYS = Object.keys(S3_STORE_OPTIONS);

const DEFAULT_MAX_RECORD_BYTES = 256 * 1024;

/**
 * One JSON object per lock, compared-and-swapped by ETag with S3 conditional requests:
 * create = PutObject If-None-Match: *, replace = PutObject If-Match, delete = DeleteObject If-Match.
 */
export function s3Store(options: S3StoreOptions): LockStore {
  const { client, bucket, prefix, maxRecordBytes, verify } = checkOptions(options);
  const op = s3Operations('s3Store', bucket);

  /** 412 and (for If-Match) 404 mean "the condition did not hold"; anything else throws. */
  const conditionFailed = (error: unknown, operation: AwsOperation): WriteOutcome => {
    const kind = classifyAwsError(error);
    // A retried request may have failed against our own earlier attempt.
    const maybeApplied = earlierAttemptMayHaveLanded(error);
    if (kind === 'conflict') return { ok: false, maybeApplied };
    if (kind === 'missing-object') return { ok: false, current: null, maybeApplied };
    throw toLockStoreError(error, operation);
  };

  return {
    kind: 's3',
    maxRecordBytes,

    checkKey(key) {
      checkKeyBytes(prefix + key, S3_KEY_BYTES, `S3 (with the prefix ${JSON.stringify(prefix)})`);
    },

    recordBytes: (record) => Buffer.byteLength(encodeRecord(record), 'utf8'),

    async serverTime(key) {
      const { HeadObjectCommand } = await loadS3Sdk();
      const { command, date } = recordServerDate(
        new HeadObjectCommand({ Bucket: bucket, Key: prefix + key }),
      );
      try {
        await client.send(command);
      } catch (error) {
        // A key that is gone still answers, with a Date.
        if (classifyAwsError(error) !== 'missing-object')
          throw toLockStoreError(error, op('HeadObject', key, false));
      }
      return date();
    },

    verifyScope: () => verifyScopeOf(verify, client, `s3://${bucket}/${prefix}`),

    async read(key): Promise<VersionedRecord | null> {
      const { GetObjectCommand } = await loadS3Sdk();
      const operation = op('GetObject', key, false);
      let text: string;
      let etag: string | undefined;
      try {
        const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: prefix + key }));
        etag = res.ETag;
        // Reading the body can fail on its own (connection reset mid-stream): same handling.
        text = res.Body ? await res.Body.transformToString('utf-8') : '';
      } catch (error) {
        if (classifyAwsError(error) === 'missing-object') return null;
        throw toLockStoreError(error, operation);
      }
      if (!etag) throw missingEtag(operation, false);
      try {
        return { version: etag, record: decodeRecord(key, text) };
      } catch (error) {
        throw error instanceof LockCorruptedError ? error.withVersion(etag) : error;
      }
    },

    async write(key, record: LockRecord, condition: WriteCondition): Promise<WriteOutcome> {
      const { PutObjectCommand } = await loadS3Sdk();
      const operation = op('PutObject', key, true);
      const precondition = 'absent' in condition ? { IfNoneMatch: '*' } : { IfMatch: condition.version };
      let etag: string | undefined;
      try {
        const res = await client.send(
          trackAttempts(
            new PutObjectCommand({
              Bucket: bucket,
              Key: prefix + key,
              Body: encodeRecord(record),
              ContentType: 'application/json',
              ...precondition,
            }),
          ),
        );
        etag = res.ETag;
      } catch (error) {
        return conditionFailed(error, operation);
      }
      // Applied, but without a version we cannot continue; a re-read recovers it.
      if (!etag) throw missingEtag(operation, true);
      return { ok: true, version: etag };
    },

    /**
     * One ListObjectsV2 page (up to 1,000 keys, in key order); the client then reads each key.
     * An object too large to be a record is reported unreadable without being fetched.
     */
    async list(listPrefix, cursor): Promise<ListPage> {
      const { ListObjectsV2Command } = await loadS3Sdk();
      let page: ListObjectsV2CommandOutput;
      try {
        page = await client.send(
          new ListObjectsV2Command({
            Bucket: bucket,
            Prefix: prefix + listPrefix,
            ContinuationToken: cursor,
          }),
        );
      } catch (error) {
        throw toLockStoreError(error, op('ListObjectsV2', listPrefix, false));
      }
      const keys: ListedKey[] = [];
      for (const { Key: objectKey, Size: size = 0 } of page.Contents ?? []) {
        // The prefix itself (a "folder" object) names no key.
        if (!objectKey?.startsWith(prefix) || objectKey.length === prefix.length) continue;
        const key = objectKey.slice(prefix.length);
        keys.push(size <= maxRecordBytes ? { key } : { key, error: tooLargeForRecord(key, size) });
      }
      return { keys, cursor: page.IsTruncated ? page.NextContinuationToken : undefined };
    },

    async delete(key, version): Promise<WriteOutcome> {
      const { DeleteObjectCommand } = await loadS3Sdk();
      const operation = op('DeleteObject', key, true);
      try {
        await client.send(
          trackAttempts(new DeleteObjectCommand({ Bucket: bucket, Key: prefix + key, IfMatch: version })),
        );
      } catch (error) {
        return conditionFailed(error, operation);
      }
      return { ok: true, version };
    },
  };
}

function tooLargeForRecord(key: string, size: number): LockCorruptedError {
  return new LockCorruptedError(key, `the object is ${size} bytes, larger than any lock record`);
}

function missingEtag(operation: AwsOperation, applied: boolean): LockStoreError {
  return new LockStoreError(
    `S3 ${operation.action} for lock "${operation.key}" returned no ETag; this S3-compatible server cannot be used with conditional writes (try the S3 list strategy).`,
    { retryable: false, maybeApplied: applied, code: 'LOCK_STORE_CONFIG', reason: 'misconfigured' },
  );
}

function checkOptions(
  options: S3StoreOptions,
): S3Location & { maxRecordBytes: number; verify: VerifyOption } {
  const location = checkS3Location('s3Store', options, S3_STORE_OPTION_KEYS);
  const prefixBytes = Buffer.byteLength(location.prefix, 'utf8');
  if (prefixBytes >= S3_KEY_BYTES) {
    throw new LockConfigError(
      `s3Store \`prefix\` is ${prefixBytes} bytes in UTF-8; S3 object keys, prefix included, are at most ${S3_KEY_BYTES}.`,
    );
  }
  const { maxRecordBytes = DEFAULT_MAX_RECORD_BYTES } = options;
  return {
    ...location,
    maxRecordBytes: checkMaxRecordBytes('s3Store', maxRecordBytes),
    verify: checkVerifyOption('s3Store', options.verify),
  };
}
