// An Express 5 service that uses @latch/express's lock middleware on a route, compiled with
// skipLibCheck: false in an app that has only @aws-sdk/client-s3 (no DynamoDB client).
import type { AddressInfo } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import { LockClient, s3Store } from '@latch/core';
import { lock, lockErrorHandler } from '@latch/express';
import express from 'express';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** How long a paying request keeps its lock, so that a concurrent one finds it held. */
const HOLD_MS = 1500;

const s3 = new S3Client({ region: env('AWS_REGION'), endpoint: env('S3_ENDPOINT'), forcePathStyle: true });
const locks = new LockClient({
  store: s3Store({ client: s3, bucket: env('LOCK_BUCKET'), prefix: env('LOCK_PREFIX') }),
  leaseMs: 10_000,
});

const app = express();
const oneAtATime = lock({ client: locks, name: 'invoice', key: (req) => req.params.id, onLocked: 'reject' });

app.post('/invoices/:id/pay', oneAtATime, async (req, res) => {
  const { fencingToken, signal } = req.lock!;
  await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
  signal.throwIfAborted();
  const id: string = req.params.id;
  res.status(200).json({ id, fencingToken });
});
app.use(lockErrorHandler());

const server = app.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(`READY ${JSON.stringify({ port, node: process.version })}`);
});

process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  locks.close().finally(() => s3.destroy());
});
