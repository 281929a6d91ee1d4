import type { S3Client } from '@aws-sdk/client-s3';
import { LockClient, s3ListStore } from '@latch/core';

// For S3-compatible stores without conditional writes. Weaker than s3Store: read the list below.
export async function migrateOnce(s3: S3Client, bucket: string, runner: string): Promise<string> {
  const locks = new LockClient({
    store: s3ListStore({ client: s3, bucket, prefix: 'locks/' }),
    leaseMs: 60_000,
  });
  return locks.withLock(
    'migrations/orders',
    async (lock) => {
      // The fencing token is the winner's created time in ms: pass it along with every write,
      // and stop when lock.signal aborts.
      lock.signal.throwIfAborted();
      return `${runner} migrated with token ${lock.fencingToken}`;
    },
    { waitMs: 5 * 60_000, context: `migration by ${runner}` },
  );
}
