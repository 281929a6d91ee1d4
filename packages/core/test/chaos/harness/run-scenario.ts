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
  /** How long each client's workers wait before they start, applied round-robin like the skews (default: none). */
  startDelaysMs?: number[];
  clockMode?: 'trusted' | 'untrusted';
  keys: number;
  unitsPerWorker: number;
  /** How long a holder keeps the lock per unit (longer than the heartbeat, so it renews), in how many writes after its begin. */
  holdMs: number;
  steps: number;
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
  /**
   * Slows the next writes of the holder that wrote the n-th accepted begin of the run (1-based):
   * `arm(key, owner)` sets the fault up for that key and the holder's owner id (its process, as
   * clients are per process) and reports how many requests it met.
   */
  slowWrites?: { atBegins: number[]; arm: (key: string, owner: string) => { readonly hits: number } };
  faults?: FaultInjector;
  deadlineMs?: number;
}

export interface ScenarioResult {
  row: SummaryRow;
  check: CheckResult;
  /** Time from each failure (kill or freeze) to the next holder's first write on that key; Infinity if it never moved. */
  recoveriesMs: number[];
  /** For each kill: when the dead holder's lease ended and when the next acquisition of its key began. */
  takeovers: Takeover[];
  /** Renewals the workers' clients reported (killed processes included). */
  renewals: number;
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
  const slowed: Array<{ readonly hits: number }> = [];
  let workers: WorkerProcesses | undefined;
  const resource = await startProtectedResource({
    ...(mirrorDir ? { mirrorDir } : {}),
    onWrite: (write) => {
      if (write.kind !== 'begin' || !write.accepted) return undefined;
      begins++;
      // Killed before the resource answers: the process dies holding the lock.
      if (scenario.killAtBegins?.includes(begins) && workers?.kill(write.process)) {
        kills.push({ process: write.process, key: write.key, token: write.token, at: performance.now() });
      }
      if (scenario.slowWrites?.atBegins.includes(begins))
        slowed.push(scenario.slowWrites.arm(write.key, write.process));
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
      if (scenario.slowWrites)
        faultsFired = slowed.reduce((sum, fault) => sum + fault.hits, faultsFired ?? 0);
    }
    return summarise(scenario, resource.writes, outcomes, kills, faultsFired);
  } finally {
    await resource.close();
    if (mirrorDir) rmSync(mirrorDir, { recursive: true, force: true });
  }
}

const processId = (index: number) => `p${index}`;

/** The scenario's keys: `<keyPrefix>/k0`, `<keyPrefix>/k1`, … */
export function scenarioKeys(scenario: Pick<Scenario, 'keyPrefix' | 'keys'>): string[] {
  return Array.from({ length: scenario.keys }, (_, i) => `${scenario.keyPrefix}/k${i}`);
}

/** A process killed at a begin: it died holding the lock on `key` with `token`. */
interface Kill {
  process: string;
  key: string;
  token: number;
  at: number;
}

/**
 * The next acquisition of a key whose holder was killed, against the dead holder's lease: it may
 * begin no earlier than that lease's end. Both on the machine's wall clock (the kill scenarios
 * skew no clocks): the lease's end as stored by the holder's last acquisition or renewal that
 * anyone heard of (a renewal in flight at the kill can only have pushed the real end later),
 * and the next holder's `acquiredAt`, the time its winning claim was sent.
 */
export interface Takeover {
  key: string;
  /** The dead holder's lease end (ms since epoch). */
  leaseEnd: number;
  /** When the next acquisition began (ms since epoch); undefined if nobody took the key. */
  nextAcquiredAt: number | undefined;
}

function planProcesses(
  scenario: Scenario,
  resourceUrl: string,
  mirrorDir: string | undefined,
): ProcessPlan[] {
  const skews = scenario.skewsMs ?? [0];
  const delays = scenario.startDelaysMs ?? [0];
  const keys = scenarioKeys(scenario);
  let clientCount = 0;
  return Array.from({ length: scenario.processes }, (_, p) => {
    const workers = Array.from({ length: scenario.workersPerProcess }, (_, w) => ({
      id: `p${p}w${w}`,
      units: Array.from(
        { length: scenario.unitsPerWorker },
        (_, u): UnitOfWork => ({
          id: `p${p}w${w}u${u}`,
          // Neighbouring workers start on different keys and then cycle through all of them.
          key: keys[(p + w + u) % keys.length]!,
        }),
      ),
    }));
    const clients = (scenario.clients === 'per-worker' ? workers : [workers[0]!]).map((worker) => {
      const n = clientCount++;
      return {
        owner: scenario.clients === 'per-worker' ? worker.id : processId(p),
        skewMs: skews[n % skews.length]!,
        startDelayMs: delays[n % delays.length]!,
      };
    });
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
      holdMs: scenario.holdMs,
      steps: scenario.steps,
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
  const takeovers = kills.map((kill) => takeoverAfterKill(writes, outcomes, kill));
  const leases = outcomes.flatMap((o) => o.leases);
  const renewals = leases.filter((note) => note.type === 'renewed').length;
  return {
    row: {
      scenario: scenario.name,
      store: scenario.storeName,
      workers: `${scenario.processes} × ${scenario.workersPerProcess}`,
      acquisitions: check.acquisitions,
      renewals,
      faults: faultsFired ?? (injected > 0 ? injected : undefined),
      overlaps: check.overlaps.length + check.sharedTokens.length + check.tokenOrderViolations.length,
      unfencedOverlaps: check.unfencedOverlaps.length,
      staleWritesRejected: check.staleWritesRejected,
      lostOrDoubled: check.lostUnits.length + check.doubledUnits.length,
      earliestTakeoverMs: takeovers.length
        ? Math.min(...takeovers.map((t) => (t.nextAcquiredAt ?? Number.POSITIVE_INFINITY) - t.leaseEnd))
        : undefined,
      worstRecoveryMs: recoveriesMs.length ? Math.max(...recoveriesMs) : undefined,
    },
    check,
    recoveriesMs,
    takeovers,
    renewals,
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

/** The killed holder's lease end against the start of the next acquisition of its key (see {@link Takeover}). */
function takeoverAfterKill(
  writes: readonly ResourceWrite[],
  outcomes: readonly ProcessOutcome[],
  kill: Kill,
): Takeover {
  const ours = (w: { key: string; token: number }) => w.key === kill.key && w.token === kill.token;
  const heard: Array<{ expiresAt?: number | null }> = [
    ...writes.filter((w) => w.process === kill.process && ours(w)),
    ...(outcomes.find((o) => o.plan.process === kill.process)?.leases.filter(ours) ?? []),
  ];
  const ends = heard.flatMap((h) => (typeof h.expiresAt === 'number' ? [h.expiresAt] : []));
  // The next acquisition is the lowest later token that reached the resource.
  const next = writes
    .filter((w) => w.key === kill.key && w.kind === 'begin' && w.token > kill.token)
    .sort((a, b) => a.token - b.token)[0];
  return {
    key: kill.key,
    leaseEnd: ends.length ? Math.max(...ends) : Number.NaN,
    nextAcquiredAt: next?.acquiredAt,
  };
}

/** How long after the frozen holder began its section another holder wrote under the lock. */
function recoveryAfterPause(writes: readonly ResourceWrite[], pause: PauseReport): number {
  const frozen = writes.find((w) => w.kind === 'begin' && w.unit === pause.unit && w.token === pause.token);
  const next = writes.find(
    (w) => w.key === pause.key && w.kind === 'begin' && w.accepted && w.token > pause.token,
  );
  return frozen && next ? next.at - frozen.at : Number.POSITIVE_INFINITY;
}
