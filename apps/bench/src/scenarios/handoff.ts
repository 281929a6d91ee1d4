import { addCounts } from '../counting/request-tally.js';
import type { HoldInterval } from '../overlap.js';
import type { HandoffRow } from '../results.js';
import { runWorkers } from '../run-workers.js';
import { percentile, round } from '../stats.js';
import type { SubjectInfo } from '../subjects/catalog.js';
import type { Acquisition, ContentionOutput, ContentionTask } from '../worker-protocol.js';
import { checkOverlaps, overlapNote } from './overlap-report.js';
import { type ScenarioContext, WORKER_SLACK_MS } from './scenario-context.js';

/**
 * Scenario 2: 8 contenders split over 2 worker processes fight for one key, each holding it
 * ~5 ms. Measures hand-offs per second, how long contenders waited, and store requests per
 * hand-off (failed polls included). The memory store lives in one process, so its 8
 * contenders share one.
 */
export async function measureHandoff(ctx: ScenarioContext, subject: SubjectInfo): Promise<HandoffRow> {
  const plan = ctx.plan.handoff;
  const processes = subject.crossProcess ? plan.processes : 1;
  const keyPrefix = `${ctx.runId}/handoff/${subject.id}`;
  const tasks: ContentionTask[] = Array.from({ length: processes }, (_, processIndex) => ({
    scenario: 'handoff',
    subject: subject.id,
    backends: ctx.backends,
    keyPrefix,
    keys: 1,
    contenders: Math.ceil(plan.contenders / processes),
    holdMs: plan.holdMs,
    processIndex,
  }));
  const run = await runWorkers(tasks, {
    windowMs: plan.windowMs,
    timeoutMs: plan.windowMs + WORKER_SLACK_MS,
  });
  const outputs = run.outputs as ContentionOutput[];
  const all = outputs.flatMap((output) => output.acquisitions);
  const inWindow = all.filter((a) => a.acquiredAt <= run.endAt);
  // Contenders still waiting at the end count too (with what they had waited so far):
  // leaving them out would hide a contender that never got the lock.
  const waits = [...inWindow.map((a) => a.waitMs), ...outputs.flatMap((o) => o.unfinishedWaitsMs)];
  const requests = addCounts(...outputs.map((output) => output.requests));
  const overlaps = checkOverlaps(all);
  const windowMs = run.endAt - run.startAt;
  const row: HandoffRow = {
    subject: subject.id,
    status: overlaps.count > 0 ? 'invalid' : 'ok',
    processes,
    contenders: tasks.reduce((sum, task) => sum + task.contenders, 0),
    windowMs,
    holdMs: plan.holdMs,
    handoffs: inWindow.length,
    handoffsPerSec: round(inWindow.length / (windowMs / 1000)),
    meanHoldMs: round(meanHoldMs(inWindow)),
    physicalLimitPerSec: round(1000 / meanHoldMs(inWindow)),
    p50WaitMs: round(percentile(waits, 50)),
    p99WaitMs: round(percentile(waits, 99)),
    maxWaitMs: waits.length > 0 ? round(Math.max(...waits)) : Number.NaN,
    requestsPerHandoff: inWindow.length > 0 ? round(requests.total / inWindow.length) : Number.NaN,
    requests,
    crossProcessHandoffs: countProcessChanges(inWindow),
    perProcess: tasks.map(
      (task) => inWindow.filter((a) => a.holder.startsWith(`p${task.processIndex}c`)).length,
    ),
    releaseErrors: outputs.reduce((sum, output) => sum + output.releaseErrors, 0),
    clientCpuMsPerHandoff:
      inWindow.length > 0
        ? round(outputs.reduce((sum, o) => sum + o.cpuMs, 0) / inWindow.length)
        : Number.NaN,
    overlaps,
  };
  if (overlaps.count > 0) row.note = overlapNote(overlaps);
  else if (!subject.crossProcess) row.note = 'all 8 contenders in one client: the memory store is in-process';
  return row;
}

/**
 * How long the holders actually held, on average: a 5 ms sleep takes a little longer (timer
 * granularity), and the physical limit is what holders of that length could do back to back.
 */
export function meanHoldMs(acquisitions: readonly HoldInterval[]): number {
  if (acquisitions.length === 0) return Number.NaN;
  const total = acquisitions.reduce((sum, a) => sum + (a.releasedAt - a.acquiredAt), 0);
  return total / acquisitions.length;
}

/** How many times the lock passed from a contender in one process to one in another. */
export function countProcessChanges(acquisitions: readonly Acquisition[]): number {
  const processOf = (holder: string) => holder.slice(0, holder.indexOf('c'));
  const ordered = [...acquisitions].sort((a, b) => a.acquiredAt - b.acquiredAt);
  let changes = 0;
  for (let i = 1; i < ordered.length; i++) {
    if (processOf(ordered[i]!.holder) !== processOf(ordered[i - 1]!.holder)) changes++;
  }
  return changes;
}
