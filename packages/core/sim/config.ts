import type { RetryOptions } from '../src/shared/retry.js';
import type { StoreFlavor } from './backend.js';
import { Rng } from './rng.js';
import type { FaultRates } from './sim-network-store.js';
import type { ClockParams } from './sim-scheduler.js';

/**
 * How the clocks of a run may be wrong:
 * - 'trusted': trusted-mode clients whose wall clocks stay within toleranceMs / 2 of true time;
 * - 'mixed': trusted and untrusted clients on the same keys, clocks within that bound;
 * - 'untrusted': untrusted-mode clients, wall clocks off by up to an hour, drifting and jumping;
 * - 'trusted-broken': trusted mode with a clock beyond the bound (the documented weakness of
 *   trusted mode: the exclusion and fencing-order checks are skipped, the others still run);
 * - 'mixed-far': clock modes mixed per key as in 'mixed', the trusted clients' clocks within the
 *   bound, the untrusted clients' off by up to an hour and drifting: an untrusted holder's clock
 *   must not matter to a trusted waiter (every check runs).
 */
export type ClockRegime = 'trusted' | 'mixed' | 'untrusted' | 'trusted-broken' | 'mixed-far';

export interface ClientSlotConfig {
  leaseMs: number;
  /** undefined: the default (leaseMs / 3). */
  heartbeatMs: number | false | undefined;
  clockMode: 'trusted' | 'untrusted';
  toleranceMs: number;
  pollMs: number;
  localTurnMs: number | undefined;
  retry: Required<RetryOptions>;
  clock: ClockParams;
}

export interface ProcessFaultRates {
  /** Per client, per simulated minute. */
  partitionsPerMin: number;
  flakyLinksPerMin: number;
  pausesPerMin: number;
  crashesPerMin: number;
  closesPerMin: number;
  clockJumpsPerMin: number;
  /** Machine suspends: the monotonic clock stops for 0.5–3 leases while the wall clock moves on. */
  suspendsPerMin: number;
}

export interface RunConfig {
  seed: number;
  /** Workload and faults run for this long; then the quiet phase. */
  activeMs: number;
  flavor: StoreFlavor;
  /** Every key the workload uses: the plain locks, then the semaphores. */
  keys: string[];
  /** How many may hold each key at once: 1 for a plain lock (k1..k3), 2, 3 or 5 for a semaphore (s1, s2). */
  limits: Record<string, number>;
  /** Keys acquireAll may take together: one options object serves every key, so each group shares one limit. */
  keyGroups: string[][];
  regime: ClockRegime;
  requestTimeoutMs: number;
  intensity: 'calm' | 'moderate' | 'heavy';
  rates: FaultRates;
  processFaults: ProcessFaultRates;
  /** Mean gap between workload operations, in virtual ms. */
  meanOpGapMs: number;
  /** Whether this run's acquires sometimes ask for fail-closed (leaseMs: Infinity) locks. */
  failClosed: boolean;
  clients: ClientSlotConfig[];
  /** Exclusion (and fencing-order) checks hold in this run's clock regime. */
  exclusionChecked: boolean;
  maxLeaseMs: number;
  /**
   * The client slot that now and then has hundreds of its callers queue for one lock at once
   * (a pass storm: the lock passes among them with no write, through and past a block of
   * reserved tokens), with an endless local turn; -1 in most seeds.
   */
  stormSlot: number;
}

const SEMAPHORE_LIMITS = [2, 3, 5];
const SEMAPHORE_COUNTS = { none: 0, one: 1, two: 2 } as const;
const LEASES = [1000, 1500, 2000, 3000, 5000, 10_000];
const POLLS = [50, 100, 250, 500, 1000];

/** Everything about a run that is chosen up front, from the seed alone. */
export function makeRunConfig(seed: number, minutes: number): RunConfig {
  const rng = new Rng(seed, 'config');
  const activeMs = minutes * 60_000;
  const nClients = rng.int(2, 5);
  const nKeys = rng.int(1, 3);
  let regime: ClockRegime = rng.weighted({
    trusted: 4,
    mixed: 2,
    untrusted: 3,
    'trusted-broken': 1,
  } as const);
  const intensity = rng.weighted({ calm: 1, moderate: 2, heavy: 1 } as const);
  const scale = intensity === 'calm' ? 0.25 : intensity === 'moderate' ? 1 : 3;
  const rates: FaultRates = {
    lostRequest: 0.01 * scale,
    lostAnswer: 0.01 * scale,
    lateApply: 0.01 * scale,
    throttle: 0.02 * scale,
    slow: 0.015 * scale,
    sdkRetry: 0.008 * scale,
  };
  const processFaults: ProcessFaultRates = {
    partitionsPerMin: 0.5 * scale,
    flakyLinksPerMin: 1 * scale,
    pausesPerMin: 0.5 * scale,
    crashesPerMin: 0.15 * scale,
    closesPerMin: 0.15 * scale,
    clockJumpsPerMin: regime === 'untrusted' ? 1 * scale : 0,
    suspendsPerMin: 0,
  };
  const tolerances = Array.from({ length: nClients }, () => rng.pick([100, 200, 300, 500, 1000]));
  const minTolerance = Math.min(...tolerances);
  // The whole run: active phase plus the quiet phase (a few leases and closes).
  const horizonMs = activeMs + 200_000;
  const brokenClient = regime === 'trusted-broken' ? rng.int(0, nClients - 1) : -1;
  const clients: ClientSlotConfig[] = [];
  for (let i = 0; i < nClients; i++) {
    const leaseMs = rng.pick(LEASES);
    const heartbeatChoice = rng.weighted({ default: 5, explicit: 3, off: 1 } as const);
    const heartbeatMs =
      heartbeatChoice === 'default'
        ? undefined
        : heartbeatChoice === 'off'
          ? false
          : Math.round(leaseMs * rng.real(0.15, 0.5));
    const clockMode =
      regime === 'untrusted'
        ? 'untrusted'
        : regime === 'mixed'
          ? rng.pick(['trusted', 'untrusted'] as const)
          : 'trusted';
    let clock: ClockParams;
    const rate = 1 + rng.real(-0.005, 0.005);
    const monoOrigin = rng.real(1_000, 10_000_000);
    if (regime === 'untrusted') {
      clock = {
        offsetMs: rng.real(-3_600_000, 3_600_000),
        driftPpm: rng.real(-200, 200),
        rate,
        monoOrigin,
      };
    } else {
      // Within toleranceMs / 2 of true time over the whole run: half of the budget for the
      // offset, half for the drift.
      const budget = minTolerance / 4;
      clock = {
        offsetMs: rng.real(-budget, budget),
        driftPpm: (rng.real(-budget, budget) / horizonMs) * 1e6,
        rate,
        monoOrigin,
      };
      if (i === brokenClient) {
        clock.offsetMs = rng.pick([-1, 1]) * rng.real(minTolerance, 5 * minTolerance + 2000);
      }
    }
    const attempts = rng.int(1, 6);
    const baseMs = rng.pick([10, 25, 50, 100]);
    clients.push({
      leaseMs,
      heartbeatMs,
      clockMode,
      toleranceMs: clockMode === 'trusted' ? tolerances[i]! : rng.pick([0, 50, 200, 500]),
      pollMs: rng.pick(POLLS),
      localTurnMs:
        rng.weighted({ default: 4, short: 1, never: 1 } as const) === 'default'
          ? undefined
          : rng.chance(0.5)
            ? rng.pick([100, 500, 2000])
            : Number.POSITIVE_INFINITY,
      retry: { attempts, baseMs, maxMs: rng.pick([baseMs * 4, 500, 2000]) },
      clock,
    });
  }
  const flavor: StoreFlavor = rng.chance(0.5) ? 'dynamo' : 's3';
  const requestTimeoutMs = rng.pick([1000, 1500, 2000, 3000]);
  const meanOpGapMs = rng.pick([30, 60, 120, 250]);
  const failClosed = rng.chance(0.4);
  // Drawn after everything above, so that the rest of a seed's configuration stays what it
  // was. A seed keeps its 1–3 keys: each key costs its holders' renewals, a semaphore's several
  // holders more than a lock's one, so semaphores take the place of locks (a lock stays).
  const nSemaphores = Math.min(
    nKeys - 1,
    SEMAPHORE_COUNTS[rng.weighted({ none: 8, one: 6, two: 6 } as const)],
  );
  const limits: Record<string, number> = {};
  for (const key of ['k1', 'k2', 'k3'].slice(0, nKeys - nSemaphores)) limits[key] = 1;
  const sharedLimit = rng.chance(0.6) ? rng.pick(SEMAPHORE_LIMITS) : undefined;
  for (const key of ['s1', 's2'].slice(0, nSemaphores)) {
    // The same limit for every call on a key: user code never mixes limits on purpose.
    limits[key] = sharedLimit ?? rng.pick(SEMAPHORE_LIMITS);
  }
  const keys = Object.keys(limits);
  // Drawn last, like the semaphores: the rest of the configuration stays what it was.
  const stormSlot = rng.chance(0.12) ? rng.int(0, nClients - 1) : -1;
  if (stormSlot >= 0) clients[stormSlot]!.localTurnMs = Number.POSITIVE_INFINITY;
  // Drawn last too: half of the mixed seeds have their untrusted clients' clocks far off.
  if (regime === 'mixed' && rng.chance(0.5)) {
    regime = 'mixed-far';
    for (const client of clients) {
      if (client.clockMode !== 'untrusted') continue;
      client.clock.offsetMs = rng.real(-3_600_000, 3_600_000);
      client.clock.driftPpm = rng.real(-200, 200);
    }
  }
  // Drawn last too: machine suspends in a quarter of the seeds.
  if (rng.chance(0.25)) processFaults.suspendsPerMin = 0.5 * scale;
  return {
    seed,
    activeMs,
    flavor,
    keys,
    limits,
    keyGroups: keyGroupsOf(limits),
    regime,
    requestTimeoutMs,
    intensity,
    rates,
    processFaults,
    meanOpGapMs,
    failClosed,
    clients,
    exclusionChecked: regime !== 'trusted-broken',
    maxLeaseMs: Math.max(...clients.map((c) => c.leaseMs)),
    stormSlot,
  };
}

/** Keys with one limit, two or more of them: what acquireAll may take together. */
function keyGroupsOf(limits: Record<string, number>): string[][] {
  const byLimit = new Map<number, string[]>();
  for (const [key, limit] of Object.entries(limits)) {
    const group = byLimit.get(limit) ?? [];
    group.push(key);
    byLimit.set(limit, group);
  }
  return [...byLimit.values()].filter((group) => group.length >= 2);
}
