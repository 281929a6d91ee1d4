import { monotonicMs } from '../clock.js';
import type { CpuRow, CpuWay } from '../results.js';
import { runWorkers } from '../run-workers.js';
import { round } from '../stats.js';
import type { SubjectId, SubjectInfo } from '../subjects/catalog.js';
import type { CpuOutput, CpuTask, CpuWayOutput } from '../worker-protocol.js';
import { type CpuWayRunner, openCpuWays } from './cpu-ways.js';
import { firstLine, type ScenarioContext, WORKER_SLACK_MS } from './scenario-context.js';

/** The Latch subjects the cpu scenario measures, and their store. */
const STORES: Partial<Record<SubjectId, 's3' | 'dynamodb'>> = {
  'latch-s3': 's3',
  'latch-dynamodb': 'dynamodb',
};

/**
 * Scenario 9, worker side: warms each way up, then runs them in turn, `rounds` times
 * `cycles / rounds` cycles each, so that load from other processes falls on all three alike;
 * CPU is this process's (process.cpuUsage, user + system) around each batch.
 */
export async function performCpu(task: CpuTask): Promise<CpuOutput> {
  const ways = openCpuWays(task.store, task.backends);
  try {
    const runners: CpuWayRunner[] = [ways.latch, ways.sdk, ways.http];
    const totals = runners.map(() => ({ cycles: 0, cpuMs: 0, wallMs: 0 }));
    let serial = 0;
    const key = () => `${task.keyPrefix}/${serial++}`;
    for (const runner of runners) for (let i = 0; i < task.warmupCycles; i++) await runner.cycle(key());
    const perBatch = Math.max(1, Math.ceil(task.cycles / task.rounds));
    const batchMaxMs = task.maxMs / task.rounds;
    let latchRequests = 0;
    for (let round = 0; round < task.rounds; round++) {
      for (const [index, runner] of runners.entries()) {
        const requestsBefore = ways.latchRequests.snapshot().total;
        const cpuBefore = process.cpuUsage();
        const began = monotonicMs();
        let done = 0;
        while (done < perBatch && monotonicMs() - began < batchMaxMs) {
          await runner.cycle(key());
          done++;
        }
        const wallMs = monotonicMs() - began;
        const cpu = process.cpuUsage(cpuBefore);
        const total = totals[index]!;
        total.cycles += done;
        total.cpuMs += (cpu.user + cpu.system) / 1000;
        total.wallMs += wallMs;
        if (runner === ways.latch) latchRequests += ways.latchRequests.snapshot().total - requestsBefore;
      }
    }
    const out: CpuWayOutput[] = runners.map((runner, index) => ({ label: runner.label, ...totals[index]! }));
    return { scenario: 'cpu', ways: out, latchRequests };
  } finally {
    ways.close();
  }
}

/** Per cycle figures of one way. */
export function cpuWay(output: CpuWayOutput): CpuWay {
  return {
    label: output.label,
    cycles: output.cycles,
    cpuMsPerCycle: round(output.cpuMs / output.cycles, 4),
    wallMsPerCycle: round(output.wallMs / output.cycles, 3),
  };
}

/** Turns a worker's output into the row: per-cycle CPU of each way, and Latch's share over the SDK. */
export function cpuRow(subject: SubjectId, output: CpuOutput): CpuRow {
  const [latch, sdk, http] = output.ways.map(cpuWay);
  if (!latch || !sdk || !http || latch.cycles === 0 || sdk.cycles === 0 || http.cycles === 0) {
    return { subject, status: 'failed', note: 'a way completed no cycle' };
  }
  const over = latch.cpuMsPerCycle - sdk.cpuMsPerCycle;
  return {
    subject,
    status: 'ok',
    requestsPerCycle: round(output.latchRequests / latch.cycles, 3),
    latch,
    sdk,
    http,
    latchOverSdkMs: round(over, 4),
    latchShare: latch.cpuMsPerCycle > 0 ? round(over / latch.cpuMsPerCycle, 3) : undefined,
  };
}

/** Scenario 9, parent side: one worker process per Latch S3 / DynamoDB subject selected. */
export async function measureCpu(
  ctx: ScenarioContext,
  subjects: readonly SubjectInfo[],
  log: (line: string) => void,
): Promise<CpuRow[]> {
  const plan = ctx.plan.cpu;
  const rows: CpuRow[] = [];
  for (const subject of subjects) {
    const store = STORES[subject.id];
    if (!store) continue;
    log(`cpu: ${subject.id}`);
    const task: CpuTask = {
      scenario: 'cpu',
      subject: subject.id,
      store,
      backends: ctx.backends,
      keyPrefix: `${ctx.runId}/cpu/${subject.id}`,
      cycles: plan.cycles,
      warmupCycles: plan.warmupCycles,
      rounds: plan.rounds,
      maxMs: plan.maxMs,
    };
    try {
      const run = await runWorkers([task], { windowMs: 0, timeoutMs: 3 * plan.maxMs + WORKER_SLACK_MS });
      rows.push(cpuRow(subject.id, run.outputs[0] as CpuOutput));
    } catch (error) {
      log(`cpu: ${subject.id} failed: ${firstLine(error)}`);
      rows.push({ subject: subject.id, status: 'failed', note: firstLine(error) });
    }
  }
  return rows;
}
