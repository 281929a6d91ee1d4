import type { S3Client } from '@aws-sdk/client-s3';
import { withLock } from '@latch/bullmq';
import { LockClient, s3Store } from '@latch/core';
import { type ConnectionOptions, type Job, Worker } from 'bullmq';

export interface InvoiceJob {
  customerId: string;
  invoiceId: string;
}

/** Charges an invoice; `fencingToken` lets the ledger refuse writes from a holder that lost its lock. */
export type Charge = (invoiceId: string, fencingToken: number, signal: AbortSignal) => Promise<void>;

// Invoices of one customer are charged one at a time, across every worker process;
// different customers' invoices still run side by side.
export function startInvoiceWorker(
  connection: ConnectionOptions,
  s3: S3Client,
  bucket: string,
  charge: Charge,
): Worker<InvoiceJob, string> {
  const locks = new LockClient({ store: s3Store({ client: s3, bucket, prefix: 'jobs/' }) });

  const processor = withLock(
    async (job: Job<InvoiceJob, string>, { lock, signal }) => {
      // lock.signal's loss and BullMQ's cancellation both abort `signal`: pass it to your work.
      await charge(job.data.invoiceId, lock!.fencingToken, signal);
      return `charged ${job.data.invoiceId} as #${lock!.fencingToken} of ${lock!.key}`;
    },
    {
      client: locks,
      key: (job) => `customer/${job.data.customerId}`, // return undefined to run a job unlocked
      leaseMs: 30_000, // no longer than lockDuration, so a crashed worker's lock is gone when BullMQ retries
      onLocked: 'delay', // the default: back to the delayed set, no attempt used, slot freed
      backoff: { baseMs: 250, maxMs: 30_000 }, // pause before a delayed job runs again (with jitter)
      maxDelays: 100,
    },
  );

  return new Worker<InvoiceJob, string>('invoices', processor, {
    connection,
    concurrency: 8,
    lockDuration: 30_000,
  });
}
