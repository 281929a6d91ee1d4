import { S3Client } from '@aws-sdk/client-s3';
import { type Lock, LockClient, LockConfigError, LockLostError, s3ListStore, s3Store } from '@latch/core';
import { type RedisServer, type S3Server, startRedis, startS3Server } from '@latch/testing';
import { type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import {
  type JobLockContext,
  type JobLockOptions,
  type LockedProcessor,
  LockedWorker,
  withLock,
} from '../src/index.js';
import { until } from './helpers/until.js';

interface TestJob {
  key?: string;
}

let redis: RedisServer;
let s3: S3Server;
let s3Client: S3Client;
let queueCount = 0;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  [redis, s3] = await Promise.all([startRedis(), startS3Server({ bucket: 'locks' })]);
  s3Client = new S3Client(s3.clientConfig());
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  s3Client?.destroy();
  await Promise.all([redis?.stop(), s3?.stop()]);
});

function lockClient(owner: string, leaseMs = 60_000): LockClient {
  return new LockClient({
    store: s3Store({ client: s3Client, bucket: 'locks', prefix: 'jobs/' }),
    owner,
    leaseMs,
  });
}

/** A queue and a worker in this process whose processor runs under withLock. */
function startQueue(
  processor: LockedProcessor<TestJob, unknown>,
  options: Partial<JobLockOptions<TestJob, unknown>> & { concurrency?: number } = {},
) {
  const name = `q${++queueCount}`;
  const { concurrency = 1, ...lockOptions } = options;
  const queue = new Queue<TestJob>(name, { connection: { url: redis.url } });
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const worker = new Worker<TestJob>(
    name,
    withLock(processor, {
      client: lockClient('worker'),
      key: (job) => job.data.key,
      backoff: { baseMs: 50, maxMs: 200 },
      ...lockOptions,
    }),
    { connection, concurrency },
  );
  worker.on('error', () => {});
  cleanups.push(async () => {
    await worker.close(true);
    await queue.close();
    connection.disconnect();
  });
  return { queue, worker };
}

async function finished(queue: Queue<TestJob>, job: Job<TestJob>, timeoutMs = 30_000): Promise<Job<TestJob>> {
  return until(
    `job ${job.id} finished`,
    async () => {
      const current = await queue.getJob(job.id!);
      return current?.finishedOn ? current : undefined;
    },
    timeoutMs,
  );
}

describe('a locked job', () => {
  test('gets its lock with fencing token and signal, and releases it when it completes', async () => {
    const seen: Array<{ key: string; fencingToken: number; held: boolean }> = [];
    const { queue } = startQueue(async (_job, { lock, signal }) => {
      seen.push({ key: lock!.key, fencingToken: lock!.fencingToken, held: lock!.isHeld && !signal.aborted });
      return 'done';
    });
    const first = await finished(queue, await queue.add('a', { key: 'customer/1' }));
    const second = await finished(queue, await queue.add('a', { key: 'customer/1' }));
    expect([first.returnvalue, second.returnvalue]).toEqual(['done', 'done']);
    expect(seen).toEqual([
      { key: 'customer/1', fencingToken: 1, held: true },
      { key: 'customer/1', fencingToken: 2, held: true },
    ]);
    expect(await lockClient('observer').inspect('customer/1')).toMatchObject({
      state: 'free',
      fencingToken: 2,
    });
  });

  test('stores the job in the lock context so holders can be found', async () => {
    let inside: string | undefined;
    const { queue } = startQueue(async () => {
      inside = (await lockClient('observer').inspect('customer/ctx')).context;
    });
    const job = await finished(queue, await queue.add('nightly', { key: 'customer/ctx' }));
    expect(inside).toBe(`${queue.name} job ${job.id} (nightly)`);
  });

  test('releases its lock when it fails', async () => {
    const { queue } = startQueue(async (job) => {
      if (job.name === 'broken') throw new Error('payment provider said no');
      return 'ok';
    });
    const failed = await finished(queue, await queue.add('broken', { key: 'customer/2' }, { attempts: 1 }));
    expect(failed.failedReason).toBe('payment provider said no');
    // The lease is 60 s: only a release, not expiry, frees the lock this soon.
    expect(await lockClient('observer').inspect('customer/2')).toMatchObject({
      state: 'free',
      fencingToken: 1,
    });
    const next = await finished(queue, await queue.add('fine', { key: 'customer/2' }));
    expect(next.returnvalue).toBe('ok');
    expect(next.attemptsStarted).toBe(1);
  });

  test('sees its signal abort with a LockLostError when the lock is lost, and fails', async () => {
    let reason: unknown;
    let started = false;
    const { queue } = startQueue(
      async (_job, { signal }) => {
        started = true;
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('signal never aborted')), 20_000);
          signal.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        reason = signal.reason;
        throw signal.reason;
      },
      { leaseMs: 3000 },
    );
    const job = await queue.add('long', { key: 'customer/3' }, { attempts: 1 });
    await until('the job started', () => started);
    // An operator frees the lock: the holder's next renewal finds the record changed.
    expect(await lockClient('ops').forceRelease('customer/3')).toBe(true);
    const failed = await finished(queue, job);
    expect(reason).toBeInstanceOf(LockLostError);
    expect(failed.failedReason).toMatch(/Lock "customer\/3" was lost/);
  });

  test('fails even when it ignores the signal, if its lock was lost while it ran', async () => {
    let jobLock: Lock | undefined;
    let finishWork: (() => void) | undefined;
    const { queue } = startQueue(
      async (_job, { lock }) => {
        jobLock = lock;
        await new Promise<void>((resolve) => {
          finishWork = resolve;
        });
        return `wrote with token ${lock!.fencingToken}`;
      },
      { leaseMs: 3000 },
    );
    const job = await queue.add('stubborn', { key: 'customer/4' }, { attempts: 1 });
    await until('the job started', () => finishWork);
    const thief = lockClient('ops');
    await thief.forceRelease('customer/4');
    const stolen = await until('another holder took the lock', () => thief.tryAcquire('customer/4'));
    cleanups.push(() => stolen.release());
    await until("the job's lock noticed it was lost", () => jobLock!.signal.aborted, 20_000);
    finishWork!();
    const failed = await finished(queue, job);
    expect(await failed.getState()).toBe('failed');
    expect(failed.failedReason).toMatch(/Lock "customer\/4" was lost/);
  });

  test('still completes when only the release fails, leaving the lock to its lease', async () => {
    const { queue } = startQueue(async () => {
      // The store refuses every write from now on, so the release cannot be stored.
      s3.faults.internalError({ op: 'PutObject', key: 'jobs/customer/11' });
      return 'charged';
    });
    cleanups.push(async () => s3.faults.clear());
    const done = await finished(queue, await queue.add('charge', { key: 'customer/11' }, { attempts: 1 }));
    expect(await done.getState()).toBe('completed');
    expect(done.returnvalue).toBe('charged');
    expect(await lockClient('observer').inspect('customer/11')).toMatchObject({
      state: 'held',
      fencingToken: 1,
    });
  });

  test('passes on BullMQ cancellation through the same signal', async () => {
    let started = false;
    const { queue, worker } = startQueue(async (_job, { signal }) => {
      started = true;
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      throw new Error(`stopped: ${signal.reason}`);
    });
    const job = await queue.add('cancel-me', { key: 'customer/5' }, { attempts: 1 });
    await until('the job started', () => started);
    expect(worker.cancelJob(job.id!, 'cancelled by the user')).toBe(true);
    const failed = await finished(queue, job);
    expect(failed.failedReason).toBe('stopped: cancelled by the user');
    expect(await lockClient('observer').inspect('customer/5')).toMatchObject({ state: 'free' });
  });
});

describe('a job whose key is held', () => {
  test('goes back to the delayed set without using an attempt, and runs once the key is free', async () => {
    const holder = await lockClient('someone-else').tryAcquire('customer/6');
    let runs = 0;
    const { queue } = startQueue(async (_job, { lock }) => {
      runs++;
      return lock!.fencingToken;
    });
    const job = await queue.add('wait-for-it', { key: 'customer/6' }, { attempts: 1 });
    const delayed = await until('the job was delayed twice', async () => {
      const current = await queue.getJob(job.id!);
      return current && current.attemptsStarted >= 3 ? current : undefined;
    });
    expect(runs).toBe(0);
    expect(delayed.attemptsMade).toBe(0);
    await holder!.release();
    const done = await finished(queue, job);
    expect(runs).toBe(1);
    expect(done.returnvalue).toBe(2);
    expect(done.attemptsMade).toBe(1);
  });

  test("fails the attempt with a LockTimeoutError naming the holder with onLocked: 'fail'", async () => {
    const holder = await lockClient('someone-else').tryAcquire('customer/7', {
      context: 'manual fix by ops',
    });
    cleanups.push(() => holder!.release());
    let runs = 0;
    const { queue } = startQueue(
      async () => {
        runs++;
      },
      { onLocked: 'fail' },
    );
    const failed = await finished(queue, await queue.add('eager', { key: 'customer/7' }, { attempts: 1 }));
    expect(runs).toBe(0);
    expect(failed.attemptsMade).toBe(1);
    expect(failed.failedReason).toMatch(/lock "customer\/7": held by manual fix by ops \(someone-else\)/);
  });

  test('fails for good after maxDelays re-delays, naming the key and the count', async () => {
    const holder = await lockClient('someone-else').tryAcquire('customer/8', { context: 'long import' });
    cleanups.push(() => holder!.release());
    const { queue } = startQueue(async () => 'never', { maxDelays: 2 });
    const failed = await finished(queue, await queue.add('patient', { key: 'customer/8' }, { attempts: 5 }));
    expect(failed.failedReason).toBe(
      'Lock "customer/8" was still held after this job had been delayed 2 times (maxDelays: 2), last held by long import. ' +
        'Raise maxDelays or backoff.maxMs if jobs of one key can queue up for longer than that.',
    );
    // An UnrecoverableError: the 4 remaining attempts are not used.
    expect(failed.attemptsStarted).toBe(3);
    expect(failed.attemptsMade).toBe(1);
  });

  test('waits in this process too when another slot of the same worker holds the key', async () => {
    const order: string[] = [];
    const { queue } = startQueue(
      async (job) => {
        order.push(`start ${job.name}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
        order.push(`end ${job.name}`);
      },
      { concurrency: 2 },
    );
    const [a, b] = await queue.addBulk([
      { name: 'a', data: { key: 'customer/10' } },
      { name: 'b', data: { key: 'customer/10' } },
    ]);
    await Promise.all([finished(queue, a!), finished(queue, b!)]);
    // Whichever ran first ended before the other started.
    const first = order[0]!.replace('start ', '');
    const second = first === 'a' ? 'b' : 'a';
    expect(order).toEqual([`start ${first}`, `end ${first}`, `start ${second}`, `end ${second}`]);
  });
});

describe('a job with a limit', () => {
  test('runs beside other holders while a slot is free, is delayed without an attempt when none is', async () => {
    // Two holders outside the queue, with the same limit the worker uses.
    const others = lockClient('someone-else');
    const first = await others.tryAcquire('tenant/1', { limit: 2 });
    let runs = 0;
    const { queue } = startQueue(
      async (_job, { lock }) => {
        runs++;
        return lock!.fencingToken;
      },
      { limit: 2 },
    );
    // One slot of two is taken: the job runs at once, beside the holder.
    const beside = await finished(queue, await queue.add('beside', { key: 'tenant/1' }, { attempts: 1 }));
    expect(beside.returnvalue).toBe(2);
    expect(beside.attemptsStarted).toBe(1);

    const second = await others.tryAcquire('tenant/1', { limit: 2 });
    expect(second).not.toBeNull();
    const job = await queue.add('over', { key: 'tenant/1' }, { attempts: 1 });
    const delayed = await until('the job was delayed twice', async () => {
      const current = await queue.getJob(job.id!);
      return current && current.attemptsStarted >= 3 ? current : undefined;
    });
    expect(runs).toBe(1);
    expect(delayed.attemptsMade).toBe(0);
    await first!.release();
    const done = await finished(queue, job);
    expect(runs).toBe(2);
    expect(done.returnvalue).toBe(4);
    expect(done.attemptsMade).toBe(1);
    await second!.release();
  });

  test("fails the attempt with a semaphore's LockTimeoutError with onLocked: 'fail'", async () => {
    const others = lockClient('someone-else');
    const holders = [
      await others.tryAcquire('tenant/3', { limit: 2, context: 'big export' }),
      await others.tryAcquire('tenant/3', { limit: 2, context: 'big export' }),
    ];
    cleanups.push(() => Promise.all(holders.map((holder) => holder!.release())));
    let runs = 0;
    const { queue } = startQueue(
      async () => {
        runs++;
      },
      { limit: 2, onLocked: 'fail' },
    );
    const failed = await finished(queue, await queue.add('eager', { key: 'tenant/3' }, { attempts: 1 }));
    expect(runs).toBe(0);
    expect(failed.attemptsMade).toBe(1);
    expect(failed.failedReason).toMatch(
      /a slot of "tenant\/3": all 2 stayed taken, one of them by big export/,
    );
  });

  test('fails when the key is held with another limit, naming both', async () => {
    const holder = await lockClient('old-deploy').tryAcquire('tenant/4', { limit: 3 });
    cleanups.push(() => holder!.release());
    let runs = 0;
    const { queue } = startQueue(
      async () => {
        runs++;
      },
      { limit: 2 },
    );
    const failed = await finished(queue, await queue.add('mixed', { key: 'tenant/4' }, { attempts: 1 }));
    expect(runs).toBe(0);
    expect(failed.failedReason).toMatch(
      /^Lock "tenant\/4" is held with limit 3, and this call asked for limit 2\. Every holder of one key must use the same limit/,
    );
  });

  test('fails for good after maxDelays re-delays, naming the limit', async () => {
    const others = lockClient('someone-else');
    const holders = [
      await others.tryAcquire('tenant/2', { limit: 2, context: 'big export' }),
      await others.tryAcquire('tenant/2', { limit: 2, context: 'big export' }),
    ];
    cleanups.push(() => Promise.all(holders.map((holder) => holder!.release())));
    const { queue } = startQueue(async () => 'never', { limit: 2, maxDelays: 1 });
    const failed = await finished(queue, await queue.add('patient', { key: 'tenant/2' }, { attempts: 3 }));
    expect(failed.failedReason).toMatch(
      /^Lock "tenant\/2" still had all 2 slots \(limit: 2\) taken after this job had been delayed 1 times \(maxDelays: 1\), last held by big export\. /,
    );
    expect(failed.attemptsMade).toBe(1);
  });
});

describe('unlocked jobs', () => {
  test('run in parallel without touching the lock store', async () => {
    s3.resetRequestLog();
    let inside = 0;
    let mostInside = 0;
    const locks: Array<Lock | undefined> = [];
    const { queue } = startQueue(
      async (_job, context: JobLockContext) => {
        locks.push(context.lock);
        inside++;
        mostInside = Math.max(mostInside, inside);
        // Only returns once all four are inside at the same time.
        await until('four unlocked jobs run together', () => mostInside === 4, 20_000);
        inside--;
        return context.signal.aborted;
      },
      { concurrency: 4 },
    );
    const jobs = await queue.addBulk(Array.from({ length: 4 }, () => ({ name: 'free', data: {} })));
    const done = await Promise.all(jobs.map((job) => finished(queue, job)));
    expect(done.map((job) => job.returnvalue)).toEqual([false, false, false, false]);
    expect(locks).toEqual([undefined, undefined, undefined, undefined]);
    expect(s3.requestLog).toEqual([]);
  });
});

describe('LockedWorker', () => {
  test("runs jobs under withLock with the lease matched to the worker's lockDuration", async () => {
    const queue = new Queue<TestJob>('locked-worker', { connection: { url: redis.url } });
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    let leaseMs: number | undefined;
    const worker = new LockedWorker<TestJob, number>(
      'locked-worker',
      async (_job, { lock }) => {
        const info = await lockClient('observer').inspect(lock!.key);
        leaseMs = info.expiresAt! - info.acquiredAt!;
        return lock!.fencingToken;
      },
      {
        connection,
        lockDuration: 4000,
        lock: { client: lockClient('worker'), key: (job) => job.data.key },
      },
    );
    cleanups.push(async () => {
      await worker.close(true);
      await queue.close();
      connection.disconnect();
    });
    const done = await finished(queue, await queue.add('a', { key: 'customer/12' }));
    expect(done.returnvalue).toBe(1);
    // The client's own lease is 60 s; the worker's lockDuration (4 s) won. A renewal between
    // acquiring and looking may have moved the end a little further.
    expect(leaseMs).toBeGreaterThanOrEqual(4000);
    expect(leaseMs).toBeLessThan(10_000);
  });

  test('with a bad limit: a LockConfigError at once, before the worker connects', () => {
    const client = lockClient('worker');
    const create = () =>
      new LockedWorker('q', async () => 1, {
        connection: { host: '127.0.0.1', port: 1 },
        lock: { client, key: () => 'k', limit: 500 },
      });
    expect(create).toThrow(LockConfigError);
    expect(create).toThrow(/options.limit must be a whole number from 1 to 100 .*, got 500\./);
  });

  test('without lock options: a LockConfigError at once', () => {
    expect(() => new LockedWorker('q', async () => 1, { connection: {} } as never)).toThrow(
      /needs options.lock: \{ client, key \}/,
    );
  });
});

describe('bad input', () => {
  const client = new LockClient({ store: s3Store({ client: new S3Client({}), bucket: 'unused' }) });
  const processor = async () => undefined;

  const cases: Array<[string, unknown, RegExp]> = [
    ['no options', undefined, /needs an options object/],
    ['no client', { key: () => 'k' }, /options.client must be a LockClient/],
    ['key not a function', { client, key: 'customer' }, /options.key must be a function/],
    [
      'unknown onLocked',
      { client, key: () => 'k', onLocked: 'wait' },
      /onLocked must be 'delay' or 'fail', got "wait"/,
    ],
    [
      'infinite lease',
      { client, key: () => 'k', leaseMs: Number.POSITIVE_INFINITY },
      /leaseMs must be a positive, finite/,
    ],
    ['negative lease', { client, key: () => 'k', leaseMs: -5 }, /leaseMs must be a positive, finite/],
    [
      'heartbeat >= lease',
      { client, key: () => 'k', leaseMs: 1000, heartbeatMs: 1000 },
      /heartbeatMs \(1000\) must be shorter/,
    ],
    [
      'backoff upside down',
      { client, key: () => 'k', backoff: { baseMs: 500, maxMs: 100 } },
      /backoff.maxMs \(100\)/,
    ],
    ['fractional maxDelays', { client, key: () => 'k', maxDelays: 1.5 }, /maxDelays must be a whole number/],
    [
      'limit 0',
      { client, key: () => 'k', limit: 0 },
      /options.limit must be a whole number from 1 to 100 .*, got 0\./,
    ],
    ['fractional limit', { client, key: () => 'k', limit: 1.5 }, /options.limit must be .*, got 1.5\./],
    ['limit over 100', { client, key: () => 'k', limit: 101 }, /options.limit must be .*, got 101\./],
    ['limit as a string', { client, key: () => 'k', limit: '2' }, /options.limit must be .*, got "2"\./],
    [
      'infinite limit',
      { client, key: () => 'k', limit: Infinity },
      /options.limit must be .*, got Infinity\./,
    ],
    [
      'context not a function',
      { client, key: () => 'k', context: 'job' },
      /options.context must be a function/,
    ],
  ];
  test.each(cases)('%s: a LockConfigError at once', (_name, options, message) => {
    expect(() => withLock(processor, options as never)).toThrow(LockConfigError);
    expect(() => withLock(processor, options as never)).toThrow(message);
  });

  test('a processor that is not a function', () => {
    expect(() => withLock('process.js' as never, { client, key: () => 'k' })).toThrow(
      /needs a processor function/,
    );
  });

  test('a limit the store cannot keep, found by core before any request', () => {
    const listClient = new LockClient({ store: s3ListStore({ client: new S3Client({}), bucket: 'unused' }) });
    const create = () => withLock(processor, { client: listClient, key: () => 'k', limit: 2 });
    expect(create).toThrow(LockConfigError);
    expect(create).toThrow(
      /^withLock\(processor, options\): limit 2 is not available with the S3 list strategy/,
    );
    // A plain job lock still works there.
    expect(withLock(processor, { client: listClient, key: () => 'k' })).toBeTypeOf('function');
  });

  test('a fail-closed client without a finite leaseMs', () => {
    const failClosed = new LockClient({
      store: s3Store({ client: new S3Client({}), bucket: 'unused' }),
      leaseMs: Infinity,
    });
    expect(() => withLock(processor, { client: failClosed, key: () => 'k' })).toThrow(/leaseMs is Infinity/);
  });

  test('a key function returning a non-string fails the job before any request is sent', async () => {
    const { queue } = startQueue(async () => 'ran', {
      key: (job) => (job.data as { id?: unknown }).id as string,
    });
    s3.resetRequestLog();
    const failed = await finished(queue, await queue.add('odd', { id: 42 } as TestJob, { attempts: 1 }));
    expect(failed.failedReason).toMatch(
      /options.key\(job\) must return a string or undefined, got 42 for job/,
    );
    expect(s3.requestLog).toEqual([]);
  });
});

describe('worker slots and long jobs', () => {
  test('a delayed job frees its worker slot: another job runs while the key stays held', async () => {
    const holder = await lockClient('someone-else').tryAcquire('customer/13');
    const order: string[] = [];
    // One slot only: if the contended job waited inside the processor, nothing else could run.
    const { queue } = startQueue(async (job) => {
      order.push(job.name);
    });
    const contended = await queue.add('contended', { key: 'customer/13' }, { attempts: 1 });
    await until('the contended job was delayed', async () => {
      const current = await queue.getJob(contended.id!);
      return current && current.attemptsStarted >= 2 ? current : undefined;
    });
    const other = await finished(queue, await queue.add('other', { key: 'customer/14' }));
    expect(await other.getState()).toBe('completed');
    expect(order).toEqual(['other']);
    await holder!.release();
    const done = await finished(queue, contended);
    expect(order).toEqual(['other', 'contended']);
    expect(done.attemptsMade).toBe(1);
  });

  test('a job that runs for several leases keeps its lock: renewed, never taken, never aborted', async () => {
    const leaseMs = 1500;
    let finishWork: (() => void) | undefined;
    let jobLock: Lock | undefined;
    const { queue } = startQueue(
      async (_job, { lock, signal }) => {
        jobLock = lock;
        await new Promise<void>((resolve) => {
          finishWork = resolve;
        });
        return { aborted: signal.aborted, token: lock!.fencingToken };
      },
      { leaseMs },
    );
    const job = await queue.add('long-import', { key: 'customer/15' }, { attempts: 1 });
    await until('the job started', () => finishWork);
    const startedExpiry = jobLock!.expiresAt!;
    const rival = lockClient('rival', leaseMs);
    // Keep trying to take the key until the job's lease has been pushed a few leases further.
    await until(
      'the lease was renewed past three lease lengths',
      async () => {
        expect(await rival.tryAcquire('customer/15')).toBeNull();
        return jobLock!.expiresAt! > startedExpiry + 3 * leaseMs;
      },
      20_000,
    );
    finishWork!();
    const done = await finished(queue, job);
    expect(done.returnvalue).toEqual({ aborted: false, token: 1 });
    expect(await lockClient('observer').inspect('customer/15')).toMatchObject({
      state: 'free',
      fencingToken: 1,
    });
  });
});
