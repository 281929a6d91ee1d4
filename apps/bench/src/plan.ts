/** How much of each scenario to run. `pnpm bench` uses FULL_PLAN; `--quick` and the tests QUICK_PLAN. */
export interface BenchPlan {
  uncontended: { cycles: number; warmupCycles: number; maxMs: number };
  handoff: { processes: number; contenders: number; holdMs: number; windowMs: number };
  manyKeys: { workers: number; keys: number; windowMs: number };
  renewal: { locks: number; settleMs: number; windowMs: number };
}

export const FULL_PLAN: BenchPlan = {
  uncontended: { cycles: 200, warmupCycles: 10, maxMs: 12_000 },
  handoff: { processes: 2, contenders: 8, holdMs: 5, windowMs: 8_000 },
  manyKeys: { workers: 32, keys: 1_000, windowMs: 5_000 },
  // A full minute, so every library's renewal period fits in whole: requests per minute are counted, not extrapolated.
  renewal: { locks: 100, settleMs: 1_000, windowMs: 60_000 },
};

export const QUICK_PLAN: BenchPlan = {
  uncontended: { cycles: 20, warmupCycles: 2, maxMs: 5_000 },
  handoff: { processes: 2, contenders: 8, holdMs: 5, windowMs: 1_500 },
  manyKeys: { workers: 32, keys: 1_000, windowMs: 1_500 },
  renewal: { locks: 100, settleMs: 200, windowMs: 3_000 },
};
