import type { Queue, QueueEvents } from 'bullmq';
import type { LedgerService } from './ledger-routes.js';
import type { LockBoard } from './lock-board.js';

export const BATCH_SIZE = 30;
export const CUSTOMERS = ['acme', 'globex', 'initech'];
const JOB_TIMEOUT_MS = 120_000;

export interface JobBatchResult {
  kind: 'jobs';
  number: number;
  jobs: number;
  customers: string[];
  completed: number;
  failed: number;
  /** Times a job found its customer's lock held and went back to the delayed set. */
  redelays: number;
  workEntries: number;
  overlaps: number;
  overlapDetails: string[];
  passed: boolean;
  finishedAt: number;
}

/** Enqueues BATCH_SIZE `sync-customer` jobs over three customers and waits for all of them. */
export async function runJobBatch(
  number: number,
  queue: Queue,
  events: QueueEvents,
  service: LedgerService,
  board: LockBoard,
): Promise<JobBatchResult> {
  const mark = service.work.mark();
  const contendedBefore = board.contendedCount('customer/');
  const ids = Array.from({ length: BATCH_SIZE }, (_, i) => `batch-${number}-job-${i + 1}`);
  // Listen before adding, so no job can finish unseen.
  const finished = waitForJobs(events, ids);
  await queue.addBulk(
    ids.map((jobId, i) => ({
      name: 'sync',
      data: { customerId: CUSTOMERS[i % CUSTOMERS.length]!, batch: number },
      opts: { jobId, removeOnComplete: 1_000, removeOnFail: 1_000 },
    })),
  );
  const outcomes = await finished;
  const work = service.work.summary(mark, (resource) => resource.startsWith('customer/'));
  return {
    kind: 'jobs',
    number,
    jobs: BATCH_SIZE,
    customers: CUSTOMERS,
    completed: outcomes.completed,
    failed: BATCH_SIZE - outcomes.completed,
    redelays: board.contendedCount('customer/') - contendedBefore,
    workEntries: work.entries,
    overlaps: work.overlaps.length,
    overlapDetails: work.overlaps.map(
      (o) => `${o.resource}: ${o.second.holder} entered while ${o.first.holder} was inside`,
    ),
    passed: work.overlaps.length === 0,
    finishedAt: Date.now(),
  };
}

/** Counts the jobs that complete; the rest count as failed (failed for good, or not done in time). */
function waitForJobs(events: QueueEvents, ids: string[]): Promise<{ completed: number }> {
  const pending = new Set(ids);
  let completed = 0;
  return new Promise((resolve) => {
    const finish = () => {
      clearTimeout(timer);
      events.off('completed', onCompleted);
      events.off('failed', onFailed);
      resolve({ completed });
    };
    const onCompleted = ({ jobId }: { jobId: string }) => {
      if (!pending.delete(jobId)) return;
      completed++;
      if (pending.size === 0) finish();
    };
    const onFailed = ({ jobId }: { jobId: string }) => {
      if (pending.delete(jobId) && pending.size === 0) finish();
    };
    const timer = setTimeout(finish, JOB_TIMEOUT_MS);
    events.on('completed', onCompleted);
    events.on('failed', onFailed);
  });
}
