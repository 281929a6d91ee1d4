// An Express 5 service that uses @latch/express's lock middleware on a route, compiled with
// skipLibCheck: false in an app that has only @aws-sdk/client-s3 (no DynamoDB client). It also
// uses core's subpaths as a user would: a custom 423 handler built with `lockErrorToHttp` from
// `@latch/core/http`, and a store wrapper written against `@latch/core/store` that audits the
// writes of the S3 store under it (and checks that its records survive encode/decode).
import type { AddressInfo } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import { LockClient, s3Store } from '@latch/core';
import { type LockHttpAnswer, lockErrorToHttp } from '@latch/core/http';
import {
  type ClaimOutcome,
  type ClaimRequest,
  decodeRecord,
  encodeRecord,
  type LockRecord,
  type LockStore,
  type VersionedRecord,
  type WriteCondition,
  type WriteOutcome,
} from '@latch/core/store';
import { type LockedHandler, lock, lockErrorHandler } from '@latch/express';
import express from 'express';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** How long a paying request keeps its lock, so that a concurrent one finds it held. */
const HOLD_MS = 1500;

/** What the audited store saw: conditional writes (claims, writes, deletes) and the last record. */
const audit = { writes: 0, lastKey: '', lastRecord: undefined as LockRecord | undefined };

/** A store that counts the conditional writes of the store it wraps: a store author's kind of code. */
function audited(inner: LockStore): LockStore {
  const seen = (key: string, record: LockRecord): void => {
    audit.writes += 1;
    audit.lastKey = key;
    audit.lastRecord = record;
  };
  const store: LockStore = {
    kind: inner.kind,
    maxRecordBytes: inner.maxRecordBytes,
    checkKey: (key: string): void => inner.checkKey(key),
    recordBytes: (record: LockRecord): number => inner.recordBytes(record),
    read: (key: string): Promise<VersionedRecord | null> => inner.read(key),
    write: (key: string, record: LockRecord, condition: WriteCondition): Promise<WriteOutcome> => {
      seen(key, record);
      return inner.write(key, record, condition);
    },
    delete: (key: string, version: string): Promise<WriteOutcome> => {
      audit.writes += 1;
      return inner.delete(key, version);
    },
  };
  const claim = inner.claim?.bind(inner);
  if (claim) {
    store.claim = (key: string, request: ClaimRequest): Promise<ClaimOutcome> => {
      seen(key, request.record);
      return claim(key, request);
    };
  }
  return store;
}

const s3 = new S3Client({ region: env('AWS_REGION'), endpoint: env('S3_ENDPOINT'), forcePathStyle: true });
const locks = new LockClient({
  store: audited(s3Store({ client: s3, bucket: env('LOCK_BUCKET'), prefix: env('LOCK_PREFIX') })),
  leaseMs: 10_000,
});

/** A held report answers with core's standard 423, plus a header saying this handler answered. */
const answerLocked: LockedHandler = (error, _req, res) => {
  const answer: LockHttpAnswer | undefined = lockErrorToHttp(error);
  if (!answer) throw error;
  res.status(answer.status).set(answer.headers).set('X-Answered-By', 'app').send(JSON.stringify(answer.body));
};

const app = express();
const oneAtATime = lock({ client: locks, name: 'invoice', key: (req) => req.params.id, onLocked: 'reject' });

app.post('/invoices/:id/pay', oneAtATime, async (req, res) => {
  const { fencingToken, signal } = req.lock!;
  await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
  signal.throwIfAborted();
  const id: string = req.params.id;
  res.status(200).json({ id, fencingToken });
});
app.post(
  '/reports/:id/build',
  lock({ client: locks, name: 'report', key: (req) => req.params.id, onLocked: answerLocked }),
  async (req, res) => {
    const { fencingToken } = req.lock!;
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    res.status(200).json({ id: req.params.id, fencingToken });
  },
);
app.get('/audit', (_req, res) => {
  const record = audit.lastRecord;
  const decoded = record && decodeRecord(audit.lastKey, encodeRecord(record));
  res.json({
    writes: audit.writes,
    lastToken: record?.token ?? null,
    roundTrip: record !== undefined && decoded?.token === record.token && decoded.writeId === record.writeId,
  });
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
