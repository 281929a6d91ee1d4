import type { S3Client } from '@aws-sdk/client-s3';
import { describeVerdict, s3Store, verifyStore } from '@latch/core';

// Before trusting a bucket on an S3-compatible store: does it honour what locks rely on?
export async function checkLockStore(s3: S3Client, bucket: string): Promise<string> {
  const store = s3Store({ client: s3, bucket, prefix: 'locks/' });
  const verdict = await verifyStore(store, { clock: { toleranceMs: 1000 } });
  if (verdict.safe) return `safe to lock on (${verdict.requests} requests)`;
  return `do not lock here:\n${describeVerdict(verdict)}`;
}
