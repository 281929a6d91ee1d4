import type { S3Client } from '@aws-sdk/client-s3';
import { LockClient, LockTimeoutError, s3Store } from '@latch/core';

// One deploy at a time across every runner that shares the bucket.
export async function deployOnce(s3: S3Client, bucket: string, release: string): Promise<string> {
  const locks = new LockClient({ store: s3Store({ client: s3, bucket, prefix: 'locks/' }), leaseMs: 60_000 });
  try {
    return await locks.withLock(
      'deploy/production',
      async (lock) => {
        // Pass lock.fencingToken along with every write the deploy makes, and stop
        // when lock.signal aborts: the lease was lost and another deploy may start.
        lock.signal.throwIfAborted();
        return `deployed ${release} as deploy #${lock.fencingToken}`;
      },
      { waitMs: 5 * 60_000, context: `deploy ${release}` },
    );
  } catch (error) {
    if (error instanceof LockTimeoutError) return `gave up: ${error.message}`;
    throw error;
  }
}
