import { type RedisServer, type S3Server, startRedis, startS3Server } from '@latch/testing';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { until } from './helpers/until.js';
import {
  startWorkerProcess,
  type WorkerProcess,
  type WorkerProcessConfig,
} from './helpers/worker-process.js';

interface JobEvent {
  type: 'start' | 'end';
  job: string;
  key: string | undefined;
  worker: string;
  fencingToken: number | null;
  /** On a start: how many jobs of its key were inside at that moment, this one included. */
  inside?: number;
  at: number;
}

let redis: RedisServer;
let s3: S3Server;
let recorder: Redis;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  [redis, s3] = await Promise.all([startRedis(), startS3Server({ bucket: 'locks' })]);
  recorder = new Redis(redis.url);
});

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.kill()));
  recorder?.disconnect();
  await Promise.all([redis?.stop(), s3?.stop()]);
});

function workerConfig(name: string, queue: string, overrides: Partial<WorkerProcessConfig> = {}) {
  return {
    name,
    queue,
    redisUrl: redis.url,
    s3Endpoint: s3.endpoint,
    bucket: 'locks',
    style: 'withLock',
    concurrency: 4,
    leaseMs: 10_000,
    lockDuration: 30_000,
    stalledInterval: 30_000,
    ...overrides,
  } satisfies WorkerProcessConfig;
}

async function startWorker(config: WorkerProcessConfig): Promise<WorkerProcess> {
  const worker = await startWorkerProcess(config);
  workers.push(worker);
  return worker;
}

async function events(queue: string): Promise<JobEvent[]> {
  return (await recorder.lrange(`${queue}:events`, 0, -1)).map((line) => JSON.parse(line) as JobEvent);
}

describe('two worker processes with concurrency 4', () => {
  test('60 jobs over 4 keys: no overlap per key, all complete, contention uses no attempts', async () => {
    const queueName = 'customers';
    const [a, b] = await Promise.all([
      startWorker(workerConfig('a', queueName, { style: 'withLock' })),
      startWorker(workerConfig('b', queueName, { style: 'LockedWorker' })),
    ]);
    const queue = new Queue(queueName, { connection: { url: redis.url } });
    try {
      const keys = ['customer/1', 'customer/2', 'customer/3', 'customer/4'];
      await queue.addBulk(
        Array.from({ length: 60 }, (_, n) => ({
          name: 'invoice',
          data: { key: keys[n % keys.length], workMs: 20 + (n % 5) * 15 },
          opts: { attempts: 1 },
        })),
      );

      await until(
        'all 60 jobs completed',
        async () => {
          const counts = await queue.getJobCounts('completed', 'failed');
          if (counts.failed) {
            const [failed] = await queue.getFailed(0, 0);
            throw new Error(`a job failed: ${failed?.failedReason}\n${a.stderr()}${b.stderr()}`);
          }
          return counts.completed === 60;
        },
        120_000,
      );

      // Every job used exactly one attempt (its completion), however often it was delayed.
      const jobs = await queue.getCompleted(0, -1);
      expect(jobs).toHaveLength(60);
      expect(jobs.map((job) => job.attemptsMade)).toEqual(Array(60).fill(1));
      const delays = jobs.reduce((sum, job) => sum + job.attemptsStarted - 1, 0);
      expect(delays, 'contention happened, so some jobs were delayed').toBeGreaterThan(0);

      // Both processes worked, and no two jobs of one key were ever inside at once.
      const recorded = await events(queueName);
      expect(new Set(recorded.map((event) => event.worker))).toEqual(new Set(['a', 'b']));
      expect(await recorder.lrange(`${queueName}:violations`, 0, -1)).toEqual([]);
      for (const key of keys) {
        const runs = recorded
          .filter((event) => event.key === key && event.type === 'start')
          .map((start) => {
            const end = recorded.find((event) => event.type === 'end' && event.job === start.job);
            if (!end) throw new Error(`job ${start.job} started but never ended`);
            return { start: start.at, end: end.at, fencingToken: start.fencingToken ?? 0 };
          })
          .sort((x, y) => x.start - y.start);
        expect(runs).toHaveLength(15);
        for (let i = 1; i < runs.length; i++) {
          const [previous, next] = [runs[i - 1]!, runs[i]!];
          expect(next.start, `${key}: a job started before the previous one ended`).toBeGreaterThanOrEqual(
            previous.end,
          );
          expect(next.fencingToken).toBeGreaterThan(previous.fencingToken);
        }
      }
    } finally {
      await queue.close();
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 150_000);
});

describe('limit 2: two worker processes with concurrency 8', () => {
  test('90 jobs over 3 keys: at most 2 of a key at once, 2 reached, all complete, contention uses no attempts', async () => {
    const queueName = 'tenants';
    const limit = 2;
    const [a, b] = await Promise.all([
      startWorker(workerConfig('a', queueName, { style: 'withLock', concurrency: 8, limit })),
      startWorker(workerConfig('b', queueName, { style: 'LockedWorker', concurrency: 8, limit })),
    ]);
    const queue = new Queue(queueName, { connection: { url: redis.url } });
    try {
      const keys = ['tenant/1', 'tenant/2', 'tenant/3'];
      await queue.addBulk(
        Array.from({ length: 90 }, (_, n) => ({
          name: 'export',
          data: { key: keys[n % keys.length], workMs: 150 + (n % 5) * 50 },
          opts: { attempts: 1 },
        })),
      );

      await until(
        'all 90 jobs completed',
        async () => {
          const counts = await queue.getJobCounts('completed', 'failed');
          if (counts.failed) {
            const [failed] = await queue.getFailed(0, 0);
            throw new Error(`a job failed: ${failed?.failedReason}\n${a.stderr()}${b.stderr()}`);
          }
          return counts.completed === 90;
        },
        120_000,
      );

      // 16 worker slots for 6 lock slots: jobs over the limit were delayed, and no delay used an attempt.
      const jobs = await queue.getCompleted(0, -1);
      expect(jobs).toHaveLength(90);
      expect(jobs.map((job) => job.attemptsMade)).toEqual(Array(90).fill(1));
      const delays = jobs.reduce((sum, job) => sum + job.attemptsStarted - 1, 0);
      expect(delays, 'jobs over the limit were delayed').toBeGreaterThan(0);

      const recorded = await events(queueName);
      expect(new Set(recorded.map((event) => event.worker))).toEqual(new Set(['a', 'b']));
      // The workers' own check: no job ever found more than `limit` of its key inside.
      expect(await recorder.lrange(`${queueName}:violations`, 0, -1)).toEqual([]);
      const mostInside: Record<string, number> = {};
      for (const key of keys) {
        const starts = recorded.filter((event) => event.key === key && event.type === 'start');
        expect(starts).toHaveLength(30);
        mostInside[key] = Math.max(...starts.map((start) => start.inside!));
        // Every run held a lock of its own: 30 runs, 30 different fencing tokens.
        expect(new Set(starts.map((start) => start.fencingToken)).size, `${key}: fencing tokens`).toBe(30);
      }
      for (const key of keys)
        expect(mostInside[key], `${key}: jobs inside at once`).toBeLessThanOrEqual(limit);
      // The limit was really used: a wrapper that ran one job of a key at a time would fail here.
      expect(Math.max(...Object.values(mostInside)), JSON.stringify(mostInside)).toBe(limit);
    } finally {
      await queue.close();
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 150_000);
});

describe('a worker killed mid-job', () => {
  test('the job stalls, its lock lease runs out, and the other worker completes it', async () => {
    const queueName = 'crash';
    // Short BullMQ lock and stall check, and a lease no longer than the BullMQ lock.
    const timings = { leaseMs: 3000, lockDuration: 3000, stalledInterval: 1000, concurrency: 1 };
    const doomed = await startWorker(workerConfig('doomed', queueName, timings));
    const queue = new Queue(queueName, { connection: { url: redis.url } });
    try {
      const job = await queue.add('report', { key: 'customer/9', workMs: 10, hangOn: 'doomed' });
      await until('the doomed worker started the job', async () =>
        (await events(queueName)).some((event) => event.type === 'start' && event.worker === 'doomed'),
      );
      const survivor = await startWorker(workerConfig('survivor', queueName, timings));
      await doomed.kill();

      const done = await until(
        'the job completed on the surviving worker',
        async () => {
          const current = await queue.getJob(job.id!);
          return current?.finishedOn ? current : undefined;
        },
        60_000,
      );
      expect(await done.getState()).toBe('completed');
      expect(done.stalledCounter).toBe(1);
      const starts = (await events(queueName)).filter((event) => event.type === 'start');
      expect(starts.map((event) => event.worker)).toEqual(['doomed', 'survivor']);
      expect(done.returnvalue).toEqual({ worker: 'survivor', fencingToken: 2 });
      expect(starts[1]!.fencingToken).toBeGreaterThan(starts[0]!.fencingToken!);
      await survivor.stop();
    } finally {
      await queue.close();
    }
  }, 90_000);
});
