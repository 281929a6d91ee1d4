import type { Server } from 'node:http';
import type { S3Client } from '@aws-sdk/client-s3';
import { LockClient, s3Store } from '@latch/core';
import { lock, lockErrorHandler } from '@latch/express';
import express, { type Express } from 'express';

/** Builds a tenant's report: a heavy query on the shared database. */
export interface Reports {
  build(tenantId: string, options: { signal: AbortSignal }): Promise<string>;
}

export function reportApp(locks: LockClient, reports: Reports): Express {
  const app = express();

  // At most 3 reports per tenant at once, across every replica that shares the lock store,
  // so one tenant cannot take the whole database. A fourth request for the same tenant gets
  // 429 Too Many Requests with Retry-After; other tenants are not held back.
  const threePerTenant = lock({
    client: locks,
    name: 'tenant-report',
    key: (req) => req.params.tenant,
    limit: 3,
    onLocked: 'reject',
  });

  app.get('/tenants/:tenant/report', threePerTenant, async (req, res) => {
    // Each of the 3 holds a lock of its own, released when its response ends.
    const report = await reports.build(req.params.tenant, { signal: req.lock!.signal });
    res.json({ report });
  });

  app.use(lockErrorHandler());
  return app;
}

/** Production wiring: locks in an S3 bucket you already have. Run it on every replica. */
export function startReportService(s3: S3Client, bucket: string, reports: Reports, port = 3000): Server {
  const locks = new LockClient({ store: s3Store({ client: s3, bucket, prefix: 'locks/' }), leaseMs: 30_000 });
  return reportApp(locks, reports).listen(port);
}
