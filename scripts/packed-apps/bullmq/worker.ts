// BullMQ 6 with ioredis and @latch/bullmq's withLock: several jobs of one customer, taken by two
// workers (each with its own lock client, as two processes would have), must all complete and
// never run at the same time. Prints one RESULT line with what happened, then shuts down.
import { S3Client } from '@aws-sdk/client-s3';
import { withLock } from '@latch/bullmq';
import { LockClient, s3Store } from '@latch/core';
import { type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

interface InvoiceJob {
  customerId: string;
  n: number;
}

interface Run {
  n: number;
  worker: string;
  fencingToken: number;
  start: number;
  end: number;
}

const JOBS = 6;
const WORK_MS = 150;
const queueName = env('QUEUE');
const s3 = new S3Client({ region: env('AWS_REGION'), endpoint: env('S3_ENDPOINT'), forcePathStyle: true });
const connections: Redis[] = [];
const locksClients: LockClient[] = [];
const runs: Run[] = [];
let active = 0;
let maxActive = 0;

function redis(): Redis {
  const connection = new Redis(env('REDIS_URL'), { maxRetriesPerRequest: null });
  connections.push(connection);
  return connection;
}

function startWorker(name: string): Worker<InvoiceJob, number> {
  const locks = new LockClient({
    store: s3Store({ client: s3, bucket: env('LOCK_BUCKET'), prefix: env('LOCK_PREFIX') }),
    leaseMs: 10_000,
  });
  locksClients.push(locks);
  const processor = withLock(
    async (job: Job<InvoiceJob, number>, { lock, signal }) => {
      if (!lock) throw new Error(`job ${job.id} ran without a lock`);
      active += 1;
      maxActive = Math.max(maxActive, active);
      const start = Date.now();
      try {
        await new Promise((resolve) => setTimeout(resolve, WORK_MS));
        signal.throwIfAborted();
      } finally {
        active -= 1;
      }
      runs.push({ n: job.data.n, worker: name, fencingToken: lock.fencingToken, start, end: Date.now() });
      return lock.fencingToken;
    },
    {
      client: locks,
      key: (job) => `customer/${job.data.customerId}`,
      backoff: { baseMs: 50, maxMs: 200 },
    },
  );
  return new Worker<InvoiceJob, number>(queueName, processor, {
    connection: redis(),
    concurrency: 3,
    lockDuration: 10_000,
  });
}

async function main(): Promise<void> {
  const queue = new Queue<InvoiceJob, number>(queueName, { connection: redis() });
  const workers = [startWorker('a'), startWorker('b')];
  const failures: string[] = [];
  for (const worker of workers)
    worker.on('failed', (job, error) => failures.push(`job ${job?.id}: ${error}`));
  await queue.addBulk(
    Array.from({ length: JOBS }, (_, n) => ({ name: 'charge', data: { customerId: 'c-42', n } })),
  );

  const deadline = Date.now() + 30_000;
  let counts = await queue.getJobCounts('completed', 'failed');
  while ((counts.completed ?? 0) + (counts.failed ?? 0) < JOBS && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    counts = await queue.getJobCounts('completed', 'failed');
  }
  console.log(`RESULT ${JSON.stringify({ jobs: JOBS, counts, maxActive, runs, failures })}`);

  await Promise.all(workers.map((worker) => worker.close()));
  await queue.close();
  await Promise.all(locksClients.map((locks) => locks.close()));
  await Promise.all(connections.map((connection) => connection.quit()));
  s3.destroy();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
