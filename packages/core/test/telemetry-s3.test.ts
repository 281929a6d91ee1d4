import { randomUUID } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { type S3Server, startS3Server } from '@latch/testing';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { LockClient, s3Store } from '../src/index.js';
import { countRequests } from './helpers/count-requests.js';
import { telemetryHarness } from './helpers/telemetry-harness.js';
import { describeTelemetryScenarios } from './helpers/telemetry-scenarios.js';

const BUCKET = 'latch-telemetry';
let server: S3Server;
let client: S3Client;

beforeAll(async () => {
  server = await startS3Server({ bucket: BUCKET });
  client = s3Client();
});

function s3Client(): S3Client {
  return new S3Client({
    endpoint: server.endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
  });
}

afterAll(async () => {
  client?.destroy();
  await server?.stop();
});

describeTelemetryScenarios(
  's3',
  () => s3Store({ client, bucket: BUCKET, prefix: 'locks/' }),
  () => `telemetry/${randomUUID()}`,
);

test('s3: store requests are counted by operation and outcome', async () => {
  const otel = telemetryHarness();
  const counted = s3Client();
  const http = countRequests(counted);
  const store = s3Store({ client: counted, bucket: BUCKET, prefix: 'locks/' });
  const locks = new LockClient({ store, telemetry: otel.telemetry });
  const rival = new LockClient({ store: s3Store({ client, bucket: BUCKET, prefix: 'locks/' }) });
  const key = `requests/${randomUUID()}`;

  const lock = await rival.acquire(key);
  expect(await locks.tryAcquire(key)).toBeNull(); // a conditional write that does not apply
  await lock.release();
  await (await locks.acquire(key)).release();
  await locks.inspect(key);

  const points = await otel.points('latch.store.requests');
  const counts = Object.fromEntries(
    points.map((p) => [
      `${p.attributes['latch.store.operation']}/${p.attributes['latch.store.outcome']}`,
      p.value,
    ]),
  );
  for (const point of points) expect(point.attributes['latch.store.kind']).toBe('s3');
  // Each store request is one HTTP request here (no faults, so no SDK retries): all are counted, once.
  expect(await otel.sum('latch.store.requests')).toBe(http.count);
  expect(Object.keys(counts).some((name) => name.endsWith('/conflict'))).toBe(true);
  expect(counts['read/ok']).toBeGreaterThanOrEqual(1);
  expect(Number(counts['delete/ok'] ?? 0) + Number(counts['write/ok'] ?? 0)).toBeGreaterThanOrEqual(1);
  await Promise.all([locks.close(), rival.close()]);
  counted.destroy();
});
