/** How much of each scenario to run. `pnpm bench` uses FULL_PLAN; `--quick` and the tests QUICK_PLAN. */
export interface BenchPlan {
  uncontended: { cycles: number; warmupCycles: number; maxMs: number };
  handoff: { processes: number; contenders: number; holdMs: number; windowMs: number };
  manyKeys: { workers: number; keys: number; windowMs: number };
  renewal: { locks: number; settleMs: number; windowMs: number };
  /** Client CPU per uncontended cycle: cycles per way, in `rounds` interleaved batches, each way capped at maxMs. */
  cpu: { cycles: number; warmupCycles: number; rounds: number; maxMs: number };
  semaphore: {
    /** The limit measured beside limit 1 (today's lock). */
    limit: number;
    /** Uncontended: cycles per way of acquiring, after warm-up cycles, each way stopped early after maxMs. */
    cycles: number;
    warmupCycles: number;
    maxMs: number;
    /** Keys taken together by acquireAll. */
    keysTogether: number;
    /** Contended: as the hand-off scenario, on one key, once with limit 1 and once with `limit`. */
    processes: number;
    contenders: number;
    holdMs: number;
    windowMs: number;
    /**
     * Renewal: `holders` places held with limit 1 (as many keys) and with `renewalLimit`
     * (holders / renewalLimit keys), leases of `leaseMs` so that renewals come often, counted
     * over `renewalWindowMs` after `settleMs`.
     */
    holders: number;
    renewalLimit: number;
    leaseMs: number;
    settleMs: number;
    renewalWindowMs: number;
  };
}

export const FULL_PLAN: BenchPlan = {
  uncontended: { cycles: 200, warmupCycles: 10, maxMs: 12_000 },
  handoff: { processes: 2, contenders: 8, holdMs: 5, windowMs: 8_000 },
  manyKeys: { workers: 32, keys: 1_000, windowMs: 5_000 },
  // A full minute, so every library's renewal period fits in whole: requests per minute are counted, not extrapolated.
  renewal: { locks: 100, settleMs: 1_000, windowMs: 60_000 },
  cpu: { cycles: 1_000, warmupCycles: 100, rounds: 5, maxMs: 40_000 },
  // 100 cycles per way of acquiring (5 ways) and 4 s windows keep the scenario near a minute and a half.
  semaphore: {
    limit: 3,
    cycles: 100,
    warmupCycles: 5,
    maxMs: 12_000,
    keysTogether: 2,
    processes: 2,
    contenders: 8,
    holdMs: 5,
    windowMs: 4_000,
    holders: 30,
    renewalLimit: 10,
    leaseMs: 6_000,
    settleMs: 500,
    renewalWindowMs: 4_000,
  },
};

export const QUICK_PLAN: BenchPlan = {
  uncontended: { cycles: 20, warmupCycles: 2, maxMs: 5_000 },
  handoff: { processes: 2, contenders: 8, holdMs: 5, windowMs: 1_500 },
  manyKeys: { workers: 32, keys: 1_000, windowMs: 1_500 },
  renewal: { locks: 100, settleMs: 200, windowMs: 3_000 },
  cpu: { cycles: 40, warmupCycles: 5, rounds: 2, maxMs: 5_000 },
  semaphore: {
    limit: 3,
    cycles: 20,
    warmupCycles: 3,
    maxMs: 5_000,
    keysTogether: 2,
    processes: 2,
    contenders: 8,
    holdMs: 5,
    windowMs: 1_500,
    holders: 30,
    renewalLimit: 10,
    leaseMs: 6_000,
    settleMs: 200,
    renewalWindowMs: 2_500,
  },
};
