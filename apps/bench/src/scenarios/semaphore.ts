import { dollarsPerMillion } from '../cost.js';
import { addCounts } from '../counting/request-tally.js';
import type {
  SemaphoreContentionStats,
  SemaphoreCycleStats,
  SemaphoreRenewalStats,
  SemaphoreRow,
} from '../results.js';
import { runWorkers } from '../run-workers.js';
import { percentile, round } from '../stats.js';
import type { SubjectInfo } from '../subjects/catalog.js';
import type {
  ContentionOutput,
  ContentionTask,
  RenewalOutput,
  RenewalTask,
  SemaphoreCycleMode,
  SemaphoreCyclesOutput,
  SemaphoreCyclesTask,
  SemaphoreModeOutput,
} from '../worker-protocol.js';
import { ACQUIRE_ALL_MS } from './renewal.js';
import { type ScenarioContext, WORKER_SLACK_MS } from './scenario-context.js';
import { summarizeSemaphoreContention } from './semaphore-contention.js';

/**
 * Scenario 6: what `limit` costs, side by side with limit 1 (today's lock) in the same run.
 * Uncontended: one client cycling acquire + release of one key with limit 1 and with the
 * plan's limit, the same two with two clients taking turns (so each acquire follows another
 * client's writes), and acquireAll of several keys: requests and latency of the acquire and
 * of the release. Contended: the hand-off scenario's contenders on one key with limit 1 and
 * with the plan's limit, every acquisition checked against the limit. Renewal: many holders
 * sharing a few records against as many plain locks, requests per renewal.
 */
export async function measureSemaphore(ctx: ScenarioContext, subject: SubjectInfo): Promise<SemaphoreRow> {
  if (subject.noSemaphore)
    return { subject: subject.id, status: 'not-applicable', note: subject.noSemaphore };
  const cycles = await measureCycles(ctx, subject);
  const contention: SemaphoreContentionStats[] = [];
  for (const limit of [1, ctx.plan.semaphore.limit])
    contention.push(await measureContention(ctx, subject, limit));
  const renewal = await measureRenewal(ctx, subject);
  const invalid = contention.filter((stats) => stats.status === 'invalid');
  const row: SemaphoreRow = {
    subject: subject.id,
    status: invalid.length > 0 ? 'invalid' : 'ok',
    cycles,
    contention,
    renewal,
  };
  if (invalid.length > 0) row.note = invalid.map((stats) => stats.note).join('; ');
  return row;
}

/** The ways of acquiring that the uncontended part cycles through, in table order. */
export function semaphoreCycleModes(limit: number, keysTogether: number): SemaphoreCycleMode[] {
  return [
    { label: "limit 1 (today's lock)", limit: 1, keys: 1, clients: 1 },
    { label: `limit ${limit}`, limit, keys: 1, clients: 1 },
    { label: 'limit 1, 2 clients in turn', limit: 1, keys: 1, clients: 2 },
    { label: `limit ${limit}, 2 clients in turn`, limit, keys: 1, clients: 2 },
    { label: `acquireAll, ${keysTogether} keys`, limit: 1, keys: keysTogether, clients: 1 },
  ];
}

async function measureCycles(ctx: ScenarioContext, subject: SubjectInfo): Promise<SemaphoreCycleStats[]> {
  const plan = ctx.plan.semaphore;
  const task: SemaphoreCyclesTask = {
    scenario: 'semaphore-cycles',
    subject: subject.id,
    backends: ctx.backends,
    keyPrefix: `${ctx.runId}/semaphore-cycles/${subject.id}`,
    modes: semaphoreCycleModes(plan.limit, plan.keysTogether),
    cycles: plan.cycles,
    warmupCycles: plan.warmupCycles,
    maxMs: plan.maxMs,
  };
  const timeoutMs = task.modes.length * plan.maxMs + WORKER_SLACK_MS;
  const run = await runWorkers([task], { windowMs: 0, timeoutMs });
  const output = run.outputs[0] as SemaphoreCyclesOutput;
  return output.modes.map((mode) => cycleStats(subject, mode));
}

function cycleStats(subject: SubjectInfo, out: SemaphoreModeOutput): SemaphoreCycleStats {
  const cycles = out.acquireMs.length;
  const all = addCounts(out.acquireRequests, out.releaseRequests);
  return {
    ...out.mode,
    cycles,
    acquireP50Ms: round(percentile(out.acquireMs, 50)),
    acquireP99Ms: round(percentile(out.acquireMs, 99)),
    releaseP50Ms: round(percentile(out.releaseMs, 50)),
    releaseP99Ms: round(percentile(out.releaseMs, 99)),
    requestsPerAcquire: round(out.acquireRequests.total / cycles, 3),
    requestsPerRelease: round(out.releaseRequests.total / cycles, 3),
    acquireRequests: out.acquireRequests,
    releaseRequests: out.releaseRequests,
    usdPerMillionCycles: dollarsPerMillion(subject.backend, all.byOp, cycles),
  };
}

/**
 * Holders that only renew: as many places with limit 1 (one key each) and with the renewal
 * limit (that many holders sharing each key's record), each in its own worker process.
 */
async function measureRenewal(ctx: ScenarioContext, subject: SubjectInfo): Promise<SemaphoreRenewalStats[]> {
  const plan = ctx.plan.semaphore;
  const tasks: RenewalTask[] = [1, plan.renewalLimit].map((limit) => ({
    scenario: 'renewal',
    subject: subject.id,
    backends: ctx.backends,
    keyPrefix: `${ctx.runId}/semaphore-renewal/${subject.id}/limit-${limit}`,
    locks: plan.holders,
    settleMs: plan.settleMs,
    windowMs: plan.renewalWindowMs,
    semaphore: { limit, leaseMs: plan.leaseMs },
  }));
  const timeoutMs = ACQUIRE_ALL_MS + plan.settleMs + plan.renewalWindowMs + WORKER_SLACK_MS;
  // One after the other: holders sharing records send more requests, which would slow the others' store.
  const runs = [];
  for (const task of tasks) runs.push(await runWorkers([task], { windowMs: 0, timeoutMs }));
  return runs.map((run, index) => {
    const output = run.outputs[0] as RenewalOutput;
    const limit = tasks[index]!.semaphore!.limit;
    const renewals = output.renewals ?? 0;
    return {
      limit,
      holders: output.held,
      keys: Math.ceil(output.held / limit),
      leaseMs: plan.leaseMs,
      windowMs: round(output.windowMs, 0),
      renewals,
      lost: output.lost ?? 0,
      requestsPerRenewal: renewals > 0 ? round(output.requests.total / renewals) : Number.NaN,
      requests: output.requests,
      requestsPerMinute: round((output.requests.total * 60_000) / output.windowMs, 0),
    };
  });
}

async function measureContention(
  ctx: ScenarioContext,
  subject: SubjectInfo,
  limit: number,
): Promise<SemaphoreContentionStats> {
  const plan = ctx.plan.semaphore;
  const processes = subject.crossProcess ? plan.processes : 1;
  const tasks: ContentionTask[] = Array.from({ length: processes }, (_, processIndex) => ({
    scenario: 'semaphore',
    subject: subject.id,
    backends: ctx.backends,
    keyPrefix: `${ctx.runId}/semaphore-contention/${subject.id}/limit-${limit}`,
    keys: 1,
    contenders: Math.ceil(plan.contenders / processes),
    holdMs: plan.holdMs,
    processIndex,
    limit,
  }));
  const run = await runWorkers(tasks, {
    windowMs: plan.windowMs,
    timeoutMs: plan.windowMs + WORKER_SLACK_MS,
  });
  return summarizeSemaphoreContention({
    limit,
    holdMs: plan.holdMs,
    tasks,
    outputs: run.outputs as ContentionOutput[],
    startAt: run.startAt,
    endAt: run.endAt,
  });
}
