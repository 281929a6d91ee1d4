import type { BackendEndpoints } from './backend-endpoints.js';
import type { RequestCounts } from './counting/request-tally.js';
import type { HoldInterval } from './overlap.js';
import type { SubjectId } from './subjects/catalog.js';

/** What one worker process is asked to do: one scenario, one subject. */
export type WorkerTask = UncontendedTask | ContentionTask | RenewalTask | SemaphoreCyclesTask | CpuTask;

interface TaskBase {
  subject: SubjectId;
  backends: BackendEndpoints;
  /** Prefix of every lock key, unique to this run and scenario. */
  keyPrefix: string;
}

export interface UncontendedTask extends TaskBase {
  scenario: 'uncontended';
  cycles: number;
  warmupCycles: number;
  /** Stop early after this long, with the cycles done so far. */
  maxMs: number;
}

/** Contenders looping acquire / hold / release until the window closes (hand-off, many keys). */
export interface ContentionTask extends TaskBase {
  scenario: 'handoff' | 'many-keys' | 'semaphore';
  /** Acquire with this limit through the subject's semaphore client (the semaphore scenario only). */
  limit?: number;
  contenders: number;
  /** Number of keys to pick from at random (1 = everyone on one key). */
  keys: number;
  holdMs: number;
  /** Names this process's contenders: "p0c3". */
  processIndex: number;
}

export interface RenewalTask extends TaskBase {
  scenario: 'renewal';
  locks: number;
  /**
   * The semaphore scenario's renewal part: hold `locks` places through the subject's semaphore
   * client, `limit` on each key (so locks / limit keys), with leases of `leaseMs`.
   */
  semaphore?: { limit: number; leaseMs: number };
  /** Pause after acquiring all locks, before counting starts. */
  settleMs: number;
  windowMs: number;
}

/** One way of taking and giving back a key, cycled uncontended in the semaphore scenario. */
export interface SemaphoreCycleMode {
  label: string;
  limit: number;
  /** Keys taken together by acquireAll (limit 1 each); 1 = acquire. */
  keys: number;
  /** Clients taking turns: with 2, each acquire follows the other client's release. */
  clients: number;
}

export interface SemaphoreCyclesTask extends TaskBase {
  scenario: 'semaphore-cycles';
  modes: SemaphoreCycleMode[];
  cycles: number;
  warmupCycles: number;
  /** Stop a mode early after this long, with the cycles done so far. */
  maxMs: number;
}

/** Client CPU per uncontended cycle: Latch, the bare SDK calls, raw HTTP, interleaved in rounds. */
export interface CpuTask extends TaskBase {
  scenario: 'cpu';
  store: 's3' | 'dynamodb';
  /** Cycles per way, split over `rounds`, after `warmupCycles` per way. */
  cycles: number;
  warmupCycles: number;
  rounds: number;
  /** Stop a way early after this long in all (maxMs / rounds per round). */
  maxMs: number;
}

/** One completed acquisition, with how long the contender waited for it. */
export interface Acquisition extends HoldInterval {
  waitMs: number;
}

export interface UncontendedOutput {
  scenario: 'uncontended';
  cycleMs: number[];
  requests: RequestCounts;
  intervals: HoldInterval[];
}

export interface ContentionOutput {
  scenario: 'handoff' | 'many-keys' | 'semaphore';
  acquisitions: Acquisition[];
  /** How long each contender still waiting when the window closed had waited by then. */
  unfinishedWaitsMs: number[];
  /** Requests sent between the window's start and end. */
  requests: RequestCounts;
  /** Releases that failed (the library threw); the lock was still recorded as held until then. */
  releaseErrors: number;
  /** CPU time this worker process used during the window (user + system), in ms. */
  cpuMs: number;
}

export interface RenewalOutput {
  scenario: 'renewal';
  requests: RequestCounts;
  windowMs: number;
  held: number;
  /** Renewals that landed during the window, when the client counts them (semaphore clients). */
  renewals?: number;
  /** Leases lost from acquiring to the window's end, when the client counts them. */
  lost?: number;
}

/** What one mode of the semaphore cycles measured: acquire and release apart. */
export interface SemaphoreModeOutput {
  mode: SemaphoreCycleMode;
  acquireMs: number[];
  releaseMs: number[];
  acquireRequests: RequestCounts;
  releaseRequests: RequestCounts;
}

export interface SemaphoreCyclesOutput {
  scenario: 'semaphore-cycles';
  modes: SemaphoreModeOutput[];
}

export interface CpuWayOutput {
  label: string;
  cycles: number;
  /** CPU of this process (user + system) over this way's cycles, in ms. */
  cpuMs: number;
  wallMs: number;
}

export interface CpuOutput {
  scenario: 'cpu';
  /** Latch, bare SDK, raw HTTP, in that order. */
  ways: CpuWayOutput[];
  /** Requests the Latch way sent during its measured cycles. */
  latchRequests: number;
}

export type WorkerOutput =
  | UncontendedOutput
  | ContentionOutput
  | RenewalOutput
  | SemaphoreCyclesOutput
  | CpuOutput;

/** Parent to worker. `startAt` / `endAt` are on the shared monotonic clock (clock.ts). */
export type ToWorker = { type: 'task'; task: WorkerTask } | { type: 'go'; startAt: number; endAt: number };

/** Worker to parent. */
export type FromWorker =
  | { type: 'ready' }
  | { type: 'done'; output: WorkerOutput }
  | { type: 'failed'; message: string };
