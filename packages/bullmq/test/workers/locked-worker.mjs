// A BullMQ worker process for the multi-process tests: it runs jobs under @latch/bullmq
// (imported from the built package) with locks in the test's S3 server, and records when each
// job starts and ends in Redis so the test can check that jobs of one key never overlap (or, with
// a `limit`, that no more than `limit` of them run at once).
import { S3Client } from '@aws-sdk/client-s3';
import { LockedWorker, withLock } from '@latch/bullmq';
import { LockClient, s3Store } from '@latch/core';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';

const config = JSON.parse(process.argv[2]);
const connection = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
const recorder = new Redis(config.redisUrl);
const s3 = new S3Client({
  endpoint: config.s3Endpoint,
  forcePathStyle: true,
  region: 'us-east-1',
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
});
const locks = new LockClient({
  store: s3Store({ client: s3, bucket: config.bucket, prefix: 'jobs/' }),
  owner: `worker-${config.name}`,
});

const record = (event) =>
  recorder.rpush(`${config.queue}:events`, JSON.stringify({ ...event, at: Date.now() }));

async function processJob(job, { lock, signal }) {
  const key = job.data.key;
  const fencingToken = lock?.fencingToken ?? null;
  // Clock-free overlap check: more than `limit` jobs of a key inside at once is a violation.
  // `inside` counts this job too, across every process, so the test can see how many ran at once.
  const inside = key ? await recorder.incr(`${config.queue}:inside:${key}`) : 0;
  if (inside > (config.limit ?? 1))
    await recorder.rpush(`${config.queue}:violations`, `${job.id} found ${inside} inside ${key}`);
  await record({ type: 'start', job: job.id, key, worker: config.name, fencingToken, inside });
  if (job.data.hangOn === config.name) await new Promise(() => {}); // stands for a worker that dies mid-job
  await new Promise((resolve) => setTimeout(resolve, job.data.workMs ?? 0));
  signal.throwIfAborted();
  if (key) await recorder.decr(`${config.queue}:inside:${key}`);
  await record({ type: 'end', job: job.id, key, worker: config.name, fencingToken });
  return { worker: config.name, fencingToken };
}

const lockOptions = {
  client: locks,
  key: (job) => job.data.key,
  ...(config.limit !== undefined && { limit: config.limit }),
  leaseMs: config.leaseMs,
  backoff: { baseMs: 50, maxMs: 400 },
  maxDelays: Number.POSITIVE_INFINITY,
};
const workerOptions = {
  connection,
  concurrency: config.concurrency,
  lockDuration: config.lockDuration,
  stalledInterval: config.stalledInterval,
};
// One worker style each, so both entry points run in the same test.
const worker =
  config.style === 'LockedWorker'
    ? new LockedWorker(config.queue, processJob, { ...workerOptions, lock: lockOptions })
    : new Worker(config.queue, withLock(processJob, lockOptions), workerOptions);

worker.on('error', (error) => console.error(`worker ${config.name}:`, error));
// Which BullMQ this process loaded, for the test to check; the built @latch/bullmq must share it.
const { default: bullmqPackage } = await import('bullmq/package.json', { with: { type: 'json' } });
if (Object.getPrototypeOf(LockedWorker) !== Worker) {
  throw new Error('@latch/bullmq and this worker script loaded different copies of bullmq');
}
await worker.waitUntilReady();
process.stdout.write(`ready bullmq@${bullmqPackage.version}\n`);

process.on('SIGTERM', async () => {
  await worker.close();
  connection.disconnect();
  recorder.disconnect();
  s3.destroy();
  process.exit(0);
});
