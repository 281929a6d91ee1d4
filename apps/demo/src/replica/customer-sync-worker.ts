import { withLock } from '@latch/bullmq';
import type { LockClient } from '@latch/core';
import { Worker } from 'bullmq';
import { customerKey, QUEUE_NAME } from '../shared/replica-config.js';
import type { LedgerClient } from './ledger-client.js';

export interface SyncCustomerJob {
  customerId: string;
  batch: number;
}

/** Stand-in for calling the CRM that a real sync would make. */
const SYNC_WORK_MS = 150;

/**
 * The `sync-customer` worker: jobs of one customer never run at the same time across the
 * replicas (withLock from @latch/bullmq); a job that finds its customer busy goes back to the
 * delayed set without using an attempt or holding a worker slot.
 */
export function startCustomerSyncWorker(redisUrl: string, locks: LockClient, ledger: LedgerClient): Worker {
  const processor = withLock<SyncCustomerJob>(
    async (job, { lock }) => {
      const key = customerKey(job.data.customerId);
      await ledger.during(key, lock!.fencingToken, () => new Promise((r) => setTimeout(r, SYNC_WORK_MS)));
      return { syncedBy: locks.owner, fencingToken: lock!.fencingToken };
    },
    {
      client: locks,
      key: (job) => customerKey(job.data.customerId),
      // Short pauses so the demo's batch finishes in seconds.
      backoff: { baseMs: 200, maxMs: 1_000 },
    },
  );
  return new Worker<SyncCustomerJob>(QUEUE_NAME, processor, {
    connection: redisConnection(redisUrl),
    concurrency: 3,
    // A killed replica's job comes back within seconds instead of BullMQ's default 30 s.
    lockDuration: 8_000,
    stalledInterval: 4_000,
  });
}

function redisConnection(redisUrl: string): { host: string; port: number; maxRetriesPerRequest: null } {
  const url = new URL(redisUrl);
  // BullMQ workers need maxRetriesPerRequest: null for their blocking connection.
  return { host: url.hostname, port: Number(url.port), maxRetriesPerRequest: null };
}
