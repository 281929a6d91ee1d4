/** Counters of one run (or a sum of runs), printed at the end and sent from workers to the parent. */
export interface SimStats {
  seeds: number;
  /** User-level lock operations by kind (acquire, tryAcquire, withLock, update, ...). */
  ops: Record<string, number>;
  /** Requests the clients' networks carried to (or lost on the way to) the store. */
  storeRequests: number;
  /** Faults by kind, counted where they hit a request or a process. */
  faults: Record<string, number>;
  /** Invariant evaluations. */
  checks: number;
  /** Driver steps (events run). */
  steps: number;
  /** Virtual ms simulated. */
  simulatedMs: number;
  /** Seeds whose clocks broke the trusted-mode bound (exclusion check skipped there). */
  exclusionSkipped: number;
  /** Violations passed over because `--ignore` matched them. */
  ignored: number;
  /**
   * Local-pass coverage: Locks handed with no store write since the lease's last write
   * (`localPasses`), leases whose Locks' tokens crossed the first reserved block
   * (`blockCrossings`), writes of a lease that raised its holder's token (`holderRaised`), and
   * hand-overs written after the handing lock's handle was read (`handedOverAfterHandleRead`).
   */
  coverage: Record<string, number>;
  /**
   * What the exclusion check looked at: Locks and semaphore slots handed to user code, and live
   * holders of each counted after a step (the vacuity guard fails a seed that saw none).
   */
  seen: Record<string, number>;
  /** Locks handed to user code by each build of core (a mixed-version run has two). */
  handedByBuild: Record<string, number>;
}

export function emptyStats(): SimStats {
  return {
    seeds: 0,
    ops: {},
    storeRequests: 0,
    faults: {},
    checks: 0,
    steps: 0,
    simulatedMs: 0,
    exclusionSkipped: 0,
    ignored: 0,
    coverage: {},
    seen: {},
    handedByBuild: {},
  };
}

export function bump(counts: Record<string, number>, kind: string, by = 1): void {
  counts[kind] = (counts[kind] ?? 0) + by;
}

export function addStats(into: SimStats, from: SimStats): void {
  into.seeds += from.seeds;
  for (const [k, v] of Object.entries(from.ops)) bump(into.ops, k, v);
  into.storeRequests += from.storeRequests;
  for (const [k, v] of Object.entries(from.faults)) bump(into.faults, k, v);
  into.checks += from.checks;
  into.steps += from.steps;
  into.simulatedMs += from.simulatedMs;
  into.exclusionSkipped += from.exclusionSkipped;
  into.ignored += from.ignored;
  for (const [k, v] of Object.entries(from.coverage ?? {})) bump(into.coverage, k, v);
  for (const [k, v] of Object.entries(from.seen ?? {})) bump(into.seen, k, v);
  for (const [k, v] of Object.entries(from.handedByBuild ?? {})) bump(into.handedByBuild, k, v);
}

export function totalOps(stats: SimStats): number {
  return Object.values(stats.ops).reduce((a, b) => a + b, 0);
}
