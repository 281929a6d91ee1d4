import { monotonicMs } from '../clock.js';
import { countsBetween } from '../counting/request-tally.js';
import type { HoldInterval } from '../overlap.js';
import type { UncontendedRow } from '../results.js';
import { runWorkers } from '../run-workers.js';
import { percentile, round } from '../stats.js';
import type { SubjectInfo } from '../subjects/catalog.js';
import type { LockSubject } from '../subjects/lock-subject.js';
import type { UncontendedOutput, UncontendedTask } from '../worker-protocol.js';
import { checkOverlaps, overlapNote } from './overlap-report.js';
import { type ScenarioContext, WORKER_SLACK_MS } from './scenario-context.js';

/**
 * Scenario 1, worker side: acquire + release on a fresh key, one cycle after the other.
 * A few warm-up cycles first, so connection set-up is not counted.
 */
export async function performUncontended(
  subject: LockSubject,
  task: UncontendedTask,
): Promise<UncontendedOutput> {
  const never = new AbortController().signal;
  for (let i = 0; i < task.warmupCycles; i++) {
    const held = await subject.acquire(`${task.keyPrefix}/warm-up/${i}`, never);
    await held.release();
  }
  const before = subject.requests.snapshot();
  const cycleMs: number[] = [];
  const intervals: HoldInterval[] = [];
  const started = monotonicMs();
  for (let i = 0; i < task.cycles && monotonicMs() - started < task.maxMs; i++) {
    const key = `${task.keyPrefix}/${i}`;
    const begin = monotonicMs();
    const held = await subject.acquire(key, never);
    const acquiredAt = monotonicMs();
    const releasedAt = monotonicMs();
    await held.release();
    cycleMs.push(monotonicMs() - begin);
    intervals.push({ key, holder: 'p0c0', acquiredAt, releasedAt });
  }
  return {
    scenario: 'uncontended',
    cycleMs,
    requests: countsBetween(before, subject.requests.snapshot()),
    intervals,
  };
}

/** Scenario 1, parent side: one worker process per subject. */
export async function measureUncontended(
  ctx: ScenarioContext,
  subject: SubjectInfo,
): Promise<UncontendedRow> {
  const plan = ctx.plan.uncontended;
  const task: UncontendedTask = {
    scenario: 'uncontended',
    subject: subject.id,
    backends: ctx.backends,
    keyPrefix: `${ctx.runId}/uncontended/${subject.id}`,
    cycles: plan.cycles,
    warmupCycles: plan.warmupCycles,
    maxMs: plan.maxMs,
  };
  const run = await runWorkers([task], { windowMs: 0, timeoutMs: plan.maxMs + WORKER_SLACK_MS });
  const output = run.outputs[0] as UncontendedOutput;
  const cycles = output.cycleMs.length;
  const overlaps = checkOverlaps(output.intervals);
  const row: UncontendedRow = {
    subject: subject.id,
    status: overlaps.count > 0 ? 'invalid' : 'ok',
    cycles,
    p50Ms: round(percentile(output.cycleMs, 50)),
    p99Ms: round(percentile(output.cycleMs, 99)),
    requestsPerCycle: round(output.requests.total / cycles, 3),
    requests: output.requests,
    overlaps,
  };
  if (overlaps.count > 0) row.note = overlapNote(overlaps);
  return row;
}
