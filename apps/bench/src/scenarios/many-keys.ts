import type { ManyKeysRow } from '../results.js';
import { runWorkers } from '../run-workers.js';
import { round } from '../stats.js';
import type { SubjectInfo } from '../subjects/catalog.js';
import type { ContentionOutput, ContentionTask } from '../worker-protocol.js';
import { checkOverlaps, overlapNote } from './overlap-report.js';
import { type ScenarioContext, WORKER_SLACK_MS } from './scenario-context.js';

/**
 * Scenario 3: 32 concurrent workers in one process, each acquiring and releasing random keys
 * out of 1,000 through one client. Measures cycles per second; collisions on a key make
 * workers wait for each other as they would in a real service.
 */
export async function measureManyKeys(ctx: ScenarioContext, subject: SubjectInfo): Promise<ManyKeysRow> {
  const plan = ctx.plan.manyKeys;
  const task: ContentionTask = {
    scenario: 'many-keys',
    subject: subject.id,
    backends: ctx.backends,
    keyPrefix: `${ctx.runId}/many-keys/${subject.id}`,
    keys: plan.keys,
    contenders: plan.workers,
    holdMs: 0,
    processIndex: 0,
  };
  const run = await runWorkers([task], {
    windowMs: plan.windowMs,
    timeoutMs: plan.windowMs + WORKER_SLACK_MS,
  });
  const output = run.outputs[0] as ContentionOutput;
  const cycles = output.acquisitions.filter((a) => a.acquiredAt <= run.endAt).length;
  const windowMs = run.endAt - run.startAt;
  const overlaps = checkOverlaps(output.acquisitions);
  const row: ManyKeysRow = {
    subject: subject.id,
    status: overlaps.count > 0 ? 'invalid' : 'ok',
    workers: plan.workers,
    keys: plan.keys,
    windowMs,
    cycles,
    cyclesPerSec: round(cycles / (windowMs / 1000)),
    requestsPerCycle: cycles > 0 ? round(output.requests.total / cycles) : Number.NaN,
    requests: output.requests,
    releaseErrors: output.releaseErrors,
    clientCpuMsPerCycle: cycles > 0 ? round(output.cpuMs / cycles) : Number.NaN,
    overlaps,
  };
  if (overlaps.count > 0) row.note = overlapNote(overlaps);
  return row;
}
