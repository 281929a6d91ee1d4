import type { Server } from 'node:http';
import type { S3Client } from '@aws-sdk/client-s3';
import { LockClient, s3Store } from '@latch/core';
import { lock, lockErrorHandler } from '@latch/express';
import express, { type Express } from 'express';

/** Your payment provider. It refuses a fencing token lower than one it has already seen. */
export interface Payments {
  charge(invoiceId: string, options: { fencingToken: number; signal: AbortSignal }): Promise<string>;
}

export function invoiceApp(locks: LockClient, payments: Payments): Express {
  const app = express();

  // One payment per invoice at a time, across every replica that shares the lock store.
  // The lock key is `invoice/<escaped id>`; a second request for the same invoice gets
  // 423 Locked with Retry-After while the first one runs.
  const oneAtATime = lock({
    client: locks,
    name: 'invoice',
    key: (req) => req.params.id,
    onLocked: 'reject',
  });

  app.post('/invoices/:id/pay', oneAtATime, async (req, res) => {
    // The lock is released when this response ends, however it ends.
    const { fencingToken, signal } = req.lock!;
    const receipt = await payments.charge(req.params.id, { fencingToken, signal });
    res.status(201).json({ receipt, fencingToken });
  });

  // Latch errors as problem+json: lock store down → 503, lock store set up wrong → 500
  // (the cause is logged to console.error), lock lost mid-request → 409.
  app.use(lockErrorHandler());
  return app;
}

/** Production wiring: locks in an S3 bucket you already have. Run it on every replica. */
export function startInvoiceService(s3: S3Client, bucket: string, payments: Payments, port = 3000): Server {
  const locks = new LockClient({ store: s3Store({ client: s3, bucket, prefix: 'locks/' }), leaseMs: 30_000 });
  return invoiceApp(locks, payments).listen(port);
}
