import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { type BackendEndpoints, LOCAL_CREDENTIALS, LOCAL_REGION } from '../backend-endpoints.js';
import { RequestTally } from '../counting/request-tally.js';
import { countSdkV3Requests } from '../counting/sdk-v3.js';
import type { LockSubject } from './lock-subject.js';

const LEASE_MS = 30_000;
const POLL_MS = 50;

interface LockBody {
  owner: string;
  expiresAt: number;
}

/**
 * The baseline most S3 lock snippets amount to: read the lock object, and if it is absent or
 * expired, write it conditionally on what was read (If-None-Match: * or If-Match: ETag);
 * otherwise sleep a fixed interval and read again. Release deletes it if the ETag is ours.
 * No renewal, no fencing token, no backoff.
 */
export function openS3GetPut(backends: BackendEndpoints): LockSubject {
  if (!backends.s3) throw new Error('The s3-get-put subject needs the S3 server.');
  const { endpoint, bucket } = backends.s3;
  const requests = new RequestTally();
  const client = new S3Client({
    endpoint,
    forcePathStyle: true,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
  countSdkV3Requests(client, requests);
  const owner = randomUUID();
  const objectKey = (key: string) => `baseline/${key}`;

  async function read(key: string): Promise<{ etag: string; body: LockBody } | null> {
    try {
      const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: objectKey(key) }));
      return { etag: res.ETag!, body: JSON.parse(await res.Body!.transformToString()) as LockBody };
    } catch (error) {
      if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404)
        return null;
      throw error;
    }
  }

  async function write(
    key: string,
    condition: { IfMatch: string } | { IfNoneMatch: '*' },
  ): Promise<string | null> {
    const body: LockBody = { owner, expiresAt: Date.now() + LEASE_MS };
    try {
      const res = await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: objectKey(key),
          Body: JSON.stringify(body),
          ...condition,
        }),
      );
      return res.ETag!;
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 412 || status === 409) return null; // someone else wrote first
      throw error;
    }
  }

  return {
    requests,
    async acquire(key, signal) {
      for (;;) {
        signal.throwIfAborted();
        const current = await read(key);
        if (!current || current.body.expiresAt < Date.now()) {
          const etag = await write(key, current ? { IfMatch: current.etag } : { IfNoneMatch: '*' });
          if (etag) {
            return {
              release: async () => {
                await client.send(
                  new DeleteObjectCommand({ Bucket: bucket, Key: objectKey(key), IfMatch: etag }),
                );
              },
            };
          }
          continue;
        }
        await sleep(POLL_MS, undefined, { signal });
      }
    },
    close: async () => client.destroy(),
  };
}
