import type { RequestCounts } from './counting/request-tally.js';
import type { OverLimit } from './holders.js';
import type { Overlap } from './overlap.js';
import type { SubjectId, SubjectInfo } from './subjects/catalog.js';

export type ScenarioId = 'uncontended' | 'handoff' | 'many-keys' | 'renewal' | 'semaphore' | 'cpu';
export const SCENARIO_IDS: readonly ScenarioId[] = [
  'uncontended',
  'handoff',
  'many-keys',
  'renewal',
  'semaphore',
  'cpu',
];

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
  /** How long each holder kept the lock, in ms. */
  holdMs?: number;
  handoffs?: number;
  handoffsPerSec?: number;
  /** How long holders actually held on average (a sleep of `holdMs` takes a little longer). */
  meanHoldMs?: number;
  /** What holders of that length one after another could do at most: 1000 / meanHoldMs per second. */
  physicalLimitPerSec?: number;
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

/** One way of taking and giving back a key in the uncontended semaphore cycles. */
export interface SemaphoreCycleStats {
  /** What was done: "limit 1 (today's lock)", "limit 3", "acquireAll, 2 keys", ... */
  label: string;
  limit: number;
  /** Keys taken together (acquireAll); 1 = acquire. */
  keys: number;
  /** Clients taking turns on the key: with 2, each acquire follows the other client's writes. */
  clients: number;
  cycles: number;
  acquireP50Ms: number;
  acquireP99Ms: number;
  releaseP50Ms: number;
  releaseP99Ms: number;
  requestsPerAcquire: number;
  requestsPerRelease: number;
  acquireRequests: RequestCounts;
  releaseRequests: RequestCounts;
  /** US$ per million acquire + release cycles at AWS list prices (null: no per-request price). */
  usdPerMillionCycles: number | null;
}

/** Acquisitions that began while `limit` others already held the key. */
export interface LimitReport {
  /** Most holders of one key seen at the same moment. */
  maxHolders: number;
  /** How many acquisitions took the key beyond its limit (0 for a correct run). */
  count: number;
  /** The first few, for the record. */
  examples: OverLimit[];
}

/** Contenders on one key with one limit, in the semaphore scenario. */
export interface SemaphoreContentionStats {
  /** ok, or invalid when more than `limit` held the key at once. */
  status: 'ok' | 'invalid';
  note?: string;
  limit: number;
  processes: number;
  contenders: number;
  holdMs: number;
  windowMs: number;
  acquisitions: number;
  acquisitionsPerSec: number;
  /** What `limit` holders each holding `holdMs` could do at most: limit × 1000 / holdMs per second. */
  physicalLimitPerSec: number;
  /** Waits of every contender: completed acquisitions, and those still waiting at the end (so far). */
  p50WaitMs: number;
  p99WaitMs: number;
  maxWaitMs: number;
  requestsPerAcquisition: number;
  requests: RequestCounts;
  /** Acquisitions per process. */
  perProcess: number[];
  releaseErrors: number;
  /** CPU the worker processes spent per acquisition, in ms. */
  clientCpuMsPerAcquisition: number;
  holders: LimitReport;
}

/** Holders renewing their leases, in the semaphore scenario: `holders` places over holders / limit keys. */
export interface SemaphoreRenewalStats {
  limit: number;
  holders: number;
  keys: number;
  leaseMs: number;
  windowMs: number;
  /** Renewals that landed during the window. */
  renewals: number;
  /** Leases lost from acquiring to the window's end (0 for a healthy run). */
  lost: number;
  requestsPerRenewal: number;
  requests: RequestCounts;
  requestsPerMinute: number;
}

/** Scenario 6: what `limit` costs, for one subject. */
export interface SemaphoreRow extends RowBase {
  cycles?: SemaphoreCycleStats[];
  contention?: SemaphoreContentionStats[];
  renewal?: SemaphoreRenewalStats[];
}

/** Client CPU of one way of doing the requests of an uncontended cycle, in the cpu scenario. */
export interface CpuWay {
  /** "Latch acquire + release", "AWS SDK v3: PutObject x 2", "raw HTTP: 2 requests". */
  label: string;
  cycles: number;
  /** Worker process CPU (user + system) per cycle, in ms. */
  cpuMsPerCycle: number;
  /** Wall-clock time per cycle, in ms (for context: the backend's latency is in it). */
  wallMsPerCycle: number;
}

/** Scenario 7: client CPU of an uncontended Latch cycle next to the bare requests it makes. */
export interface CpuRow extends RowBase {
  /** Store requests per Latch cycle, and so per cycle of the other two ways. */
  requestsPerCycle?: number;
  latch?: CpuWay;
  sdk?: CpuWay;
  http?: CpuWay;
  /** Latch's CPU on top of the bare SDK calls, per cycle, in ms. */
  latchOverSdkMs?: number;
  /** That extra as a share of Latch's whole cycle CPU (0..1). */
  latchShare?: number;
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
  /** Delays put in front of the S3 and DynamoDB servers (absent in results from before profiles existed). */
  latency?: { profile: string; seed?: number; shapes?: Record<string, { p50Ms: number; p99Ms: number }> };
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; platform: string };
  prices: unknown;
  subjects: SubjectInfo[];
  scenarios: {
    uncontended?: UncontendedRow[];
    handoff?: HandoffRow[];
    'many-keys'?: ManyKeysRow[];
    renewal?: RenewalRow[];
    cost?: CostRow[];
    semaphore?: SemaphoreRow[];
    cpu?: CpuRow[];
  };
  targets: TargetCheck[];
}
