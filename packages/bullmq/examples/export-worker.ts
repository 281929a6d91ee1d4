import type { S3Client } from '@aws-sdk/client-s3';
import { withLock } from '@latch/bullmq';
import { LockClient, s3Store } from '@latch/core';
import { type ConnectionOptions, type Job, Worker } from 'bullmq';

export interface ExportJob {
  tenantId: string;
  exportId: string;
}

/** Builds an export; `fencingToken` lets the file store refuse writes from a holder that lost its slot. */
export type BuildExport = (exportId: string, fencingToken: number, signal: AbortSignal) => Promise<void>;

// At most two exports of one tenant run at once, across every worker process, so one tenant's
// burst cannot take every worker slot; other tenants' exports still run beside them.
export function startExportWorker(
  connection: ConnectionOptions,
  s3: S3Client,
  bucket: string,
  buildExport: BuildExport,
): Worker<ExportJob, string> {
  const locks = new LockClient({ store: s3Store({ client: s3, bucket, prefix: 'exports/' }) });

  const processor = withLock(
    async (job: Job<ExportJob, string>, { lock, signal }) => {
      // Each running export holds a lock of its own, with its own fencing token.
      await buildExport(job.data.exportId, lock!.fencingToken, signal);
      return `built ${job.data.exportId} as #${lock!.fencingToken} of ${lock!.key}`;
    },
    {
      client: locks,
      key: (job) => `tenant/${job.data.tenantId}`,
      limit: 2, // exports of one tenant at once; every worker of the queue must use the same limit
      backoff: { baseMs: 250, maxMs: 30_000 }, // a third export waits in the delayed set, no attempt used
    },
  );

  return new Worker<ExportJob, string>('exports', processor, { connection, concurrency: 8 });
}
