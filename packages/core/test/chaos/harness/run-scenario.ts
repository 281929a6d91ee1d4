import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CheckResult, checkHistory } from './checker.js';
import { type ResourceWrite, startProtectedResource } from './protected-resource.js';
import type { SummaryRow } from './summary-table.js';
import {
  type PauseReport,
  type ProcessOutcome,
  type ProcessPlan,
  type StoreSpec,
  type UnitOfWork,
  WorkerProcesses,
} from './worker-processes.js';

/** Something that breaks the store while a scenario runs; `stop` heals it and says how many faults fired. */
export interface FaultInjector {
  start(): void;
  stop(): Promise<number>;
}

export interface Scenario {
  name: string;
  storeName: string;
  store: StoreSpec;
  /** Keeps the scenario's keys apart from every other scenario's on a shared backend. */
  keyPrefix: string;
  processes: number;
  workersPerProcess: number;
  /** One LockClient per process shared by its workers (the usual set-up), or one per worker. */
  clients: 'per-process' | 'per-worker';
  /** Wall-clock skew of each client, applied round-robin (default: none). */
  skewsMs?: number[];
  clockMode?: 'trusted' | 'untrusted';
  keys: number;
  unitsPerWorker: number;
  sectionMs: number;
  leaseMs: number;
  /** Longest pause between polls while waiting (default 200 ms). */
  pollMs?: number;
  /** Pause between a worker's units (default 0), so a releasing worker does not take the key straight back. */
  thinkMs?: number;
  /** Freeze the event loop of whichever worker writes the n-th accepted begin of the run (1-based). */
  freezeAtBegins?: number[];
  /**
   * Kill -9 whichever process writes the n-th accepted begin of the run (1-based), i.e. a process
   * that holds a lock, early enough that others still want its key.
   */
  killAtBegins?: number[];
  faults?: FaultInjector;
  deadlineMs?: number;
}

export interface ScenarioResult {
  row: SummaryRow;
  check: CheckResult;
  /** Time from each failure (kill or freeze) to the next holder's first write on that key; Infinity if it never moved. */
  recoveriesMs: number[];
  pauses: PauseReport[];
  /** Typed lock errors the workers met and retried, by class name. */
  typedErrors: Record<string, number>;
  /** Holders that stopped because their lock's signal aborted before they wrote. */
  abandonedAfterLoss: number;
  /** Acquisitions whose lock was already lost when acquire resolved. */
  lostOnArrival: number;
  untypedErrors: string[];
  /** Processes that crashed or overran: the run is not trustworthy. */
  processFailures: string[];
}

/**
 * Runs one scenario: worker processes contend for the scenario's keys through @latch/core while
 * faults are injected, then the resource's history is checked.
 */
export async function runScenario(scenario: Scenario): Promise<ScenarioResult> {
  const mirrorDir = scenario.freezeAtBegins?.length ? mkdtempSync(join(tmpdir(), 'latch-chaos-')) : undefined;
  let begins = 0;
  const kills: Kill[] = [];
  let workers: WorkerProcesses | undefined;
  const resource = await startProtectedResource({
    ...(mirrorDir ? { mirrorDir } : {}),
    onWrite: (write) => {
      if (write.kind !== 'begin' || !write.accepted) return undefined;
      begins++;
      // Killed before the resource answers: the process dies holding the lock.
      if (scenario.killAtBegins?.includes(begins) && workers?.kill(write.process)) {
        kills.push({ process: write.process, key: write.key, at: performance.now() });
      }
      return scenario.freezeAtBegins?.includes(begins) ? { freeze: true } : undefined;
    },
  });
  try {
    const plans = planProcesses(scenario, resource.url, mirrorDir);
    workers = new WorkerProcesses(plans);
    scenario.faults?.start();
    let outcomes: ProcessOutcome[];
    let faultsFired: number | undefined;
    try {
      outcomes = await workers.run(scenario.deadlineMs ?? 90_000);
    } finally {
      faultsFired = await scenario.faults?.stop();
    }
    return summarise(scenario, resource.writes, outcomes, kills, faultsFired);
  } finally {
    await resource.close();
    if (mirrorDir) rmSync(mirrorDir, { recursive: true, force: true });
  }
}

const processId = (index: number) => `p${index}`;

/** A process killed at a begin: it died holding the lock on `key`. */
interface Kill {
  process: string;
  key: string;
  at: number;
}

function planProcesses(
  scenario: Scenario,
  resourceUrl: string,
  mirrorDir: string | undefined,
): ProcessPlan[] {
  const skews = scenario.skewsMs ?? [0];
  let clientCount = 0;
  return Array.from({ length: scenario.processes }, (_, p) => {
    const workers = Array.from({ length: scenario.workersPerProcess }, (_, w) => ({
      id: `p${p}w${w}`,
      units: Array.from(
        { length: scenario.unitsPerWorker },
        (_, u): UnitOfWork => ({
          id: `p${p}w${w}u${u}`,
          // Neighbouring workers start on different keys and then cycle through all of them.
          key: `${scenario.keyPrefix}/k${(p + w + u) % scenario.keys}`,
        }),
      ),
    }));
    const clients = (scenario.clients === 'per-worker' ? workers : [workers[0]!]).map((worker) => ({
      owner: scenario.clients === 'per-worker' ? worker.id : processId(p),
      skewMs: skews[clientCount++ % skews.length]!,
    }));
    const plan: ProcessPlan = {
      process: processId(p),
      store: scenario.store,
      resourceUrl,
      lock: {
        leaseMs: scenario.leaseMs,
        pollMs: scenario.pollMs ?? 200,
        clockMode: scenario.clockMode ?? 'trusted',
      },
      clients,
      workers,
      sectionMs: scenario.sectionMs,
      thinkMs: scenario.thinkMs ?? 0,
      waitMs: 10_000,
      maxAttemptsPerUnit: 50,
      pauseCapMs: 20_000,
    };
    if (mirrorDir) plan.mirrorDir = mirrorDir;
    return plan;
  });
}

function summarise(
  scenario: Scenario,
  writes: readonly ResourceWrite[],
  outcomes: ProcessOutcome[],
  kills: readonly Kill[],
  faultsFired: number | undefined,
): ScenarioResult {
  const survivors = outcomes.filter((o) => o.killedAt === undefined);
  const reports = outcomes.flatMap((o) => (o.report ? [o.report] : []));
  const check = checkHistory(writes, {
    mustBeDone: survivors.flatMap((o) => o.plan.workers.flatMap((w) => w.units.map((u) => u.id))),
    reportedDone: reports.flatMap((r) => r.done),
  });
  const typedErrors: Record<string, number> = {};
  for (const report of reports) {
    for (const [name, count] of Object.entries(report.typedErrors))
      typedErrors[name] = (typedErrors[name] ?? 0) + count;
  }
  const pauses = reports.flatMap((r) => r.pauses);
  // Kills and freezes are faults too: count the ones that happened.
  const injected = kills.length + pauses.length;
  const recoveriesMs = [
    ...kills.map((kill) => recoveryAfterKill(writes, kill)),
    ...pauses.map((pause) => recoveryAfterPause(writes, pause)),
  ];
  return {
    row: {
      scenario: scenario.name,
      store: scenario.storeName,
      workers: `${scenario.processes} × ${scenario.workersPerProcess}`,
      acquisitions: check.acquisitions,
      faults: faultsFired ?? (injected > 0 ? injected : undefined),
      overlaps: check.overlaps.length + check.sharedTokens.length + check.tokenOrderViolations.length,
      unfencedOverlaps: check.unfencedOverlaps,
      staleWritesRejected: check.staleWritesRejected,
      lostOrDoubled: check.lostUnits.length + check.doubledUnits.length,
      worstRecoveryMs: recoveriesMs.length ? Math.max(...recoveriesMs) : undefined,
    },
    check,
    recoveriesMs,
    pauses,
    typedErrors,
    abandonedAfterLoss: reports.reduce((sum, r) => sum + r.abandonedAfterLoss, 0),
    lostOnArrival: reports.reduce((sum, r) => sum + r.lostOnArrival, 0),
    untypedErrors: reports.flatMap((r) => r.untypedErrors),
    processFailures: outcomes.flatMap((o) => (o.failure ? [`${o.plan.process}: ${o.failure}`] : [])),
  };
}

/** How long after the kill another process wrote under the lock the killed process held. */
function recoveryAfterKill(writes: readonly ResourceWrite[], kill: Kill): number {
  const next = writes.find(
    (w) =>
      w.key === kill.key && w.kind === 'begin' && w.accepted && w.process !== kill.process && w.at > kill.at,
  );
  return next ? next.at - kill.at : Number.POSITIVE_INFINITY;
}

/** How long after the frozen holder began its section another holder wrote under the lock. */
function recoveryAfterPause(writes: readonly ResourceWrite[], pause: PauseReport): number {
  const frozen = writes.find((w) => w.kind === 'begin' && w.unit === pause.unit && w.token === pause.token);
  const next = writes.find(
    (w) => w.key === pause.key && w.kind === 'begin' && w.accepted && w.token > pause.token,
  );
  return frozen && next ? next.at - frozen.at : Number.POSITIVE_INFINITY;
}
