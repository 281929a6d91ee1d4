import { addCounts } from '../counting/request-tally.js';
import { countHolders } from '../holders.js';
import type { LimitReport, SemaphoreContentionStats } from '../results.js';
import { percentile, round } from '../stats.js';
import type { LockSubject } from '../subjects/lock-subject.js';
import type { ContentionOutput, ContentionTask } from '../worker-protocol.js';
import { performContention } from './contention-loop.js';

/**
 * The semaphore scenario's contended part, worker side: the hand-off scenario's contention
 * loop, every acquire taking one of `task.limit` places through the subject's semaphore client.
 */
export function performSemaphoreContention(
  subject: LockSubject,
  task: ContentionTask,
  window: { startAt: number; endAt: number },
): Promise<ContentionOutput> {
  if (!subject.newSemaphoreClient) throw new Error(`${task.subject} has no semaphore client.`);
  const client = subject.newSemaphoreClient();
  const limit = task.limit ?? 1;
  const limited: LockSubject = {
    requests: subject.requests,
    acquire: (key, signal) => client.acquire(key, limit, signal),
    close: () => subject.close(),
  };
  return performContention(limited, task, window);
}

/** What the contention run of one limit is made of, as the parent collected it. */
export interface SemaphoreContentionRun {
  limit: number;
  holdMs: number;
  /** One task per worker process, in process order. */
  tasks: readonly Pick<ContentionTask, 'contenders' | 'processIndex'>[];
  outputs: readonly ContentionOutput[];
  startAt: number;
  endAt: number;
}

/**
 * The numbers of one contention run, and its validity: more than `limit` holders of the key at
 * any moment makes it invalid, as an overlap does for a lock.
 */
export function summarizeSemaphoreContention(run: SemaphoreContentionRun): SemaphoreContentionStats {
  const { outputs, limit } = run;
  const all = outputs.flatMap((output) => output.acquisitions);
  const inWindow = all.filter((a) => a.acquiredAt <= run.endAt);
  // Contenders still waiting at the end count too, with what they had waited so far.
  const waits = [...inWindow.map((a) => a.waitMs), ...outputs.flatMap((o) => o.unfinishedWaitsMs)];
  const requests = addCounts(...outputs.map((output) => output.requests));
  const counted = countHolders(all, limit);
  const holders: LimitReport = {
    maxHolders: counted.maxHolders,
    count: counted.overLimit.length,
    examples: counted.overLimit.slice(0, 5),
  };
  const windowMs = run.endAt - run.startAt;
  const n = inWindow.length;
  const stats: SemaphoreContentionStats = {
    status: holders.count > 0 ? 'invalid' : 'ok',
    limit,
    processes: run.tasks.length,
    contenders: run.tasks.reduce((sum, task) => sum + task.contenders, 0),
    holdMs: run.holdMs,
    windowMs,
    acquisitions: n,
    acquisitionsPerSec: round(n / (windowMs / 1000)),
    physicalLimitPerSec: round((limit * 1000) / run.holdMs),
    p50WaitMs: round(percentile(waits, 50)),
    p99WaitMs: round(percentile(waits, 99)),
    maxWaitMs: waits.length > 0 ? round(Math.max(...waits)) : Number.NaN,
    requestsPerAcquisition: n > 0 ? round(requests.total / n) : Number.NaN,
    requests,
    perProcess: run.tasks.map(
      (task) => inWindow.filter((a) => a.holder.startsWith(`p${task.processIndex}c`)).length,
    ),
    releaseErrors: outputs.reduce((sum, output) => sum + output.releaseErrors, 0),
    clientCpuMsPerAcquisition: n > 0 ? round(outputs.reduce((sum, o) => sum + o.cpuMs, 0) / n) : Number.NaN,
    holders,
  };
  if (stats.status === 'invalid') {
    stats.note = `${holders.count} acquisition(s) beyond limit ${limit}: ${holders.maxHolders} held one key at the same time`;
  }
  return stats;
}
