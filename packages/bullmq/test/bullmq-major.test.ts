import { type RedisServer, startRedis } from '@latch/testing';
import { Queue, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LockedWorker } from '../src/index.js';
import { until } from './helpers/until.js';
import { startWorkerProcess } from './helpers/worker-process.js';

// Each vitest project (see vitest.config.ts) names the BullMQ major it runs the suite against.
// These tests make sure that major is the one really loaded, so that an alias that stops
// working cannot quietly run the whole suite against the other major twice.

let redis: RedisServer;

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis?.stop();
});

function projectMajor(projectName: string | undefined): number {
  const named = /^bullmq (\d+)$/.exec(projectName ?? '');
  if (!named) throw new Error(`run this suite through a "bullmq <major>" project, not ${projectName}`);
  return Number(named[1]);
}

const major = (version: string) => Number(version.split('.')[0]);

describe('the BullMQ major under test', () => {
  test('is the one the project names, in the tests and in the adapter source', async ({ task }) => {
    const expected = projectMajor(task.file.projectName);
    // A Queue writes its library version to Redis: this is the Queue the tests import.
    const queue = new Queue('major-check', { connection: { url: redis.url } });
    try {
      const version = await until('the queue wrote its version', () => queue.getVersion());
      expect(version).toMatch(/^bullmq:\d+\.\d+\.\d+/);
      expect(major(version.slice('bullmq:'.length)), `loaded ${version}`).toBe(expected);
    } finally {
      await queue.close();
    }
    // The adapter's own `bullmq` import is the same module as the tests'.
    expect(Object.getPrototypeOf(LockedWorker)).toBe(Worker);
  });

  test('is the one the project names, in worker processes that load the built package', async ({ task }) => {
    const expected = projectMajor(task.file.projectName);
    const worker = await startWorkerProcess({
      name: 'major-check',
      queue: 'major-check-worker',
      redisUrl: redis.url,
      s3Endpoint: 'http://127.0.0.1:9', // never called: no job is added
      bucket: 'unused',
      style: 'LockedWorker',
      concurrency: 1,
      leaseMs: 10_000,
      lockDuration: 30_000,
      stalledInterval: 30_000,
    });
    try {
      expect(major(worker.bullmqVersion), `worker process loaded bullmq ${worker.bullmqVersion}`).toBe(
        expected,
      );
    } finally {
      await worker.stop();
    }
  });
});
