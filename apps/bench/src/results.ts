import type { RequestCounts } from './counting/request-tally.js';
import type { Overlap } from './overlap.js';
import type { SubjectId, SubjectInfo } from './subjects/catalog.js';

export type ScenarioId = 'uncontended' | 'handoff' | 'many-keys' | 'renewal';
export const SCENARIO_IDS: readonly ScenarioId[] = ['uncontended', 'handoff', 'many-keys', 'renewal'];

/**
 * ok: measured; invalid: two holders overlapped, so the numbers mean nothing; failed: the
 * run crashed; not-applicable: the scenario does not apply to the subject.
 */
export type RowStatus = 'ok' | 'invalid' | 'failed' | 'not-applicable';

export interface RowBase {
  subject: SubjectId;
  status: RowStatus;
  note?: string;
}

export interface OverlapReport {
  count: number;
  /** The first few, for the record. */
  examples: Overlap[];
}

export interface UncontendedRow extends RowBase {
  cycles?: number;
  p50Ms?: number;
  p99Ms?: number;
  requestsPerCycle?: number;
  requests?: RequestCounts;
  overlaps?: OverlapReport;
}

export interface HandoffRow extends RowBase {
  processes?: number;
  contenders?: number;
  windowMs?: number;
  handoffs?: number;
  handoffsPerSec?: number;
  /** Waits of every contender: completed acquisitions, and those still waiting at the end (so far). */
  p50WaitMs?: number;
  p99WaitMs?: number;
  maxWaitMs?: number;
  requestsPerHandoff?: number;
  requests?: RequestCounts;
  /** Hand-offs from a holder in one process to a contender in the other. */
  crossProcessHandoffs?: number;
  /** Acquisitions per process: shows whether one process kept the lock to itself. */
  perProcess?: number[];
  releaseErrors?: number;
  /** CPU the worker processes spent per hand-off (client side: SDK, library), in ms. */
  clientCpuMsPerHandoff?: number;
  overlaps?: OverlapReport;
}

export interface ManyKeysRow extends RowBase {
  workers?: number;
  keys?: number;
  windowMs?: number;
  cycles?: number;
  cyclesPerSec?: number;
  requestsPerCycle?: number;
  requests?: RequestCounts;
  releaseErrors?: number;
  /** CPU the worker process spent per cycle (client side: SDK, library), in ms. */
  clientCpuMsPerCycle?: number;
  overlaps?: OverlapReport;
}

export interface RenewalRow extends RowBase {
  locks?: number;
  windowMs?: number;
  requestsPerMinute?: number;
  /** Requests per minute, per operation. */
  perMinuteByOp?: Record<string, number>;
}

export interface CostRow extends RowBase {
  /** US$ per million uncontended acquire + release cycles. */
  usdPerMillionCycles?: number | null;
  /** US$ per million contended hand-offs (wasted polls included). */
  usdPerMillionHandoffs?: number | null;
  /** US$ per 30-day month for renewing 100 held locks. */
  usdPerMonthHolding100?: number | null;
}

export interface TargetCheck {
  name: string;
  target: string;
  measured: string;
  met: boolean;
}

export interface BenchResults {
  schema: 'latch-bench/1';
  startedAt: string;
  durationMs: number;
  quick: boolean;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; platform: string };
  prices: unknown;
  subjects: SubjectInfo[];
  scenarios: {
    uncontended?: UncontendedRow[];
    handoff?: HandoffRow[];
    'many-keys'?: ManyKeysRow[];
    renewal?: RenewalRow[];
    cost?: CostRow[];
  };
  targets: TargetCheck[];
}
