import { randomUUID } from 'node:crypto';
import { cpus, totalmem } from 'node:os';
import { startBackends } from './backends.js';
import { AWS_PROFILE, DEFAULT_LATENCY_SEED } from './latency/aws-profile.js';
import { type LatencyProfile, withLatency } from './latency/latency-backends.js';
import { type BenchPlan, FULL_PLAN, QUICK_PLAN } from './plan.js';
import { PRICES } from './prices.js';
import { type BenchResults, type RowBase, SCENARIO_IDS, type ScenarioId } from './results.js';
import { computeCost } from './scenarios/cost.js';
import { measureCpu } from './scenarios/cpu.js';
import { measureHandoff } from './scenarios/handoff.js';
import { measureManyKeys } from './scenarios/many-keys.js';
import { measureRenewal } from './scenarios/renewal.js';
import { firstLine, type ScenarioContext } from './scenarios/scenario-context.js';
import { measureSemaphore } from './scenarios/semaphore.js';
import { measureUncontended } from './scenarios/uncontended.js';
import { SUBJECTS, type SubjectId, type SubjectInfo, subjectInfo } from './subjects/catalog.js';
import { checkTargets } from './targets.js';

export interface RunBenchOptions {
  /** Short windows and few cycles: a smoke run in seconds, not a measurement. */
  quick?: boolean;
  /** Scenarios to run (default: all). Cost is always computed from what ran. */
  scenarios?: readonly ScenarioId[];
  /** Subjects to run (default: all). */
  subjects?: readonly SubjectId[];
  /** raw (default): the local servers as they are; aws: S3 and DynamoDB requests delayed as in AWS. */
  latency?: LatencyProfile;
  /** Seed of the aws profile's delays (default: DEFAULT_LATENCY_SEED). */
  latencySeed?: number;
  /** Progress lines; default: none. */
  log?: (line: string) => void;
}

/** Runs the selected scenarios for the selected subjects on freshly started local backends. */
export async function runBench(options: RunBenchOptions = {}): Promise<BenchResults> {
  const startedAt = new Date();
  const began = performance.now();
  const log = options.log ?? (() => undefined);
  const plan: BenchPlan = options.quick ? QUICK_PLAN : FULL_PLAN;
  const selected = options.subjects ? options.subjects.map(subjectInfo) : [...SUBJECTS];
  const scenarioIds = SCENARIO_IDS.filter((id) => !options.scenarios || options.scenarios.includes(id));

  log(`starting backends for ${selected.map((s) => s.id).join(', ')}`);
  const latency = options.latency ?? 'raw';
  const latencySeed = options.latencySeed ?? DEFAULT_LATENCY_SEED;
  const backends = await startBackends(selected);
  const delayed = await withLatency(backends.endpoints, latency, latencySeed).catch(async (error) => {
    await backends.stop();
    throw error;
  });
  if (latency !== 'raw')
    log(`latency profile ${latency} (seed ${latencySeed}): S3 and DynamoDB through delay proxies`);
  const ctx: ScenarioContext = { backends: delayed.endpoints, plan, runId: randomUUID().slice(0, 8) };
  const scenarios: BenchResults['scenarios'] = {};

  /** Runs one scenario subject by subject; a failing subject gets a 'failed' row, the rest go on. */
  async function each<Row extends RowBase>(
    scenario: ScenarioId,
    measure: (subject: SubjectInfo) => Promise<Row>,
  ): Promise<Row[]> {
    const rows: Row[] = [];
    for (const subject of selected) {
      log(`${scenario}: ${subject.id}`);
      try {
        rows.push(await measure(subject));
      } catch (error) {
        log(`${scenario}: ${subject.id} failed: ${firstLine(error)}`);
        rows.push({ subject: subject.id, status: 'failed', note: firstLine(error) } as Row);
      }
    }
    return rows;
  }

  try {
    for (const scenario of scenarioIds) {
      switch (scenario) {
        case 'uncontended':
          scenarios.uncontended = await each(scenario, (subject) => measureUncontended(ctx, subject));
          break;
        case 'handoff':
          scenarios.handoff = await each(scenario, (subject) => measureHandoff(ctx, subject));
          break;
        case 'many-keys':
          scenarios['many-keys'] = await each(scenario, (subject) => measureManyKeys(ctx, subject));
          break;
        case 'renewal': {
          log(`renewal: all subjects at once, ${plan.renewal.windowMs / 1000} s`);
          scenarios.renewal = await measureRenewal(ctx, selected);
          break;
        }
        case 'semaphore':
          scenarios.semaphore = await each(scenario, (subject) => measureSemaphore(ctx, subject));
          break;
        case 'cpu':
          scenarios.cpu = await measureCpu(ctx, selected, log);
          break;
      }
    }
  } finally {
    await delayed.stop();
    await backends.stop();
  }
  scenarios.cost = computeCost(selected, scenarios);

  const cpuList = cpus();
  return {
    schema: 'latch-bench/1',
    startedAt: startedAt.toISOString(),
    durationMs: Math.round(performance.now() - began),
    quick: options.quick === true,
    latency:
      latency === 'raw'
        ? { profile: 'raw' }
        : { profile: latency, seed: latencySeed, shapes: { ...AWS_PROFILE } },
    machine: {
      cpus: cpuList.length,
      cpuModel: cpuList[0]?.model.trim() ?? 'unknown',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
    },
    prices: PRICES,
    subjects: selected,
    scenarios,
    targets: checkTargets(scenarios),
  };
}
