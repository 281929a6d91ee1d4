import { LockClient, type LockStore } from '@latch/core';

// Acquire in one job, release in another: the handle is a plain string you can pass along
// (an environment variable, a CI output, a queue message).
export async function acquireInJobOne(store: LockStore): Promise<string> {
  const locks = new LockClient({ store, leaseMs: 15 * 60_000, heartbeatMs: false });
  const lock = await locks.acquire('pipeline/deploy', { waitMs: 60_000, context: 'pipeline run 1234' });
  return lock.handle;
}

export async function releaseInJobTwo(store: LockStore, handle: string): Promise<void> {
  const locks = new LockClient({ store });
  await locks.release('pipeline/deploy', handle, { data: { deployed: 'v1.4.2' } });
}
