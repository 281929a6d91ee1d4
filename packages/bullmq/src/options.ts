import { checkOptionKeys, type LockClient, LockConfigError } from '@latch/core';
import type { Job } from 'bullmq';

/** How a job whose lock is held elsewhere is handled. */
export type OnLocked = 'delay' | 'fail';

/** Pause before a contended job runs again: grows from `baseMs`, doubling up to `maxMs`, with jitter. */
export interface DelayBackoff {
  /** First pause, in ms (default 1000). */
  baseMs?: number;
  /** Longest pause, in ms (default 30 000). */
  maxMs?: number;
}

export interface JobLockOptions<DataType = unknown, ResultType = unknown, NameType extends string = string> {
  /** The Latch client whose store holds the job locks (one per process is enough). */
  client: LockClient;
  /** Names the lock a job needs; jobs with the same key never run at the same time (no more than `limit` of them). `undefined` runs the job unlocked. */
  key: (job: Job<DataType, ResultType, NameType>) => string | undefined;
  /**
   * How many jobs of one key may run at once, across every worker and process (a whole number
   * from 1 to 100; default 1). Each of them holds its own lock with its own fencing token; a job
   * that finds all of them taken is handled as `onLocked` says. Every worker of a key must use
   * the same limit.
   */
  limit?: number;
  /**
   * What happens when another job holds the key: `'delay'` (default) puts the job back in the
   * delayed set after a backoff without using an attempt; `'fail'` fails this attempt with a
   * LockTimeoutError (BullMQ then retries it if attempts remain).
   */
  onLocked?: OnLocked;
  /** Lease of a job lock, in ms (default: the client's). Keep it at or below the worker's `lockDuration`. */
  leaseMs?: number;
  /** Renewal interval, in ms (default: a third of the lease). */
  heartbeatMs?: number;
  /** Backoff between re-delays of a contended job. */
  backoff?: DelayBackoff;
  /** How many times a job may be delayed by contention before it fails for good (default 100; Infinity: no limit). */
  maxDelays?: number;
  /** Text stored with the lock and shown to whoever finds it held (default: "<queue> job <id> (<name>)"). */
  context?: (job: Job<DataType, ResultType, NameType>) => string;
}

/** Options with every default filled in. */
export interface ResolvedJobLockOptions<DataType, ResultType, NameType extends string> {
  client: LockClient;
  key: (job: Job<DataType, ResultType, NameType>) => string | undefined;
  limit: number;
  onLocked: OnLocked;
  leaseMs: number | undefined;
  heartbeatMs: number | undefined;
  backoff: Required<DelayBackoff>;
  maxDelays: number;
  context: (job: Job<DataType, ResultType, NameType>) => string;
}

const WHERE = 'withLock(processor, options)';

/** Every option of withLock (and LockedWorker's `lock`): the compiler fails here when one is added but not listed. */
const JOB_LOCK_OPTIONS: Record<keyof JobLockOptions, true> = {
  client: true,
  key: true,
  limit: true,
  onLocked: true,
  leaseMs: true,
  heartbeatMs: true,
  backoff: true,
  maxDelays: true,
  context: true,
};
const JOB_LOCK_OPTION_KEYS = Object.keys(JOB_LOCK_OPTIONS);
const BACKOFF_OPTIONS: Record<keyof DelayBackoff, true> = { baseMs: true, maxMs: true };
const BACKOFF_OPTION_KEYS = Object.keys(BACKOFF_OPTIONS);
/** Options of other Latch APIs that a job lock does not take, with what to do instead. */
const JOB_LOCK_HINTS: Readonly<Record<string, string>> = {
  waitMs:
    'a job lock never waits (it takes one try, so no worker slot is held waiting); a contended job is delayed, see onLocked and backoff.',
  store: 'withLock takes a client built on the store: client: new LockClient({ store }).',
};

/**
 * Refuses unknown keys in job lock options and their `backoff`; `where` names the entry point
 * (LockedWorker checks its `lock` option before withLock sees it, to name itself).
 */
export function checkJobLockOptionKeys(where: string, options: object): void {
  checkOptionKeys(where, options, JOB_LOCK_OPTION_KEYS, JOB_LOCK_HINTS);
  const { backoff } = options as { backoff?: unknown };
  if (backoff !== undefined && (typeof backoff !== 'object' || backoff === null)) {
    throw new LockConfigError(
      `${where}: options.backoff must be an object { baseMs, maxMs }, got ${describe(backoff)}.`,
    );
  }
  checkOptionKeys(`${where} backoff`, backoff, BACKOFF_OPTION_KEYS);
}

/** Checks everything that can be checked before a job arrives, so mistakes surface at start-up. */
export function resolveJobLockOptions<DataType, ResultType, NameType extends string>(
  options: JobLockOptions<DataType, ResultType, NameType>,
): ResolvedJobLockOptions<DataType, ResultType, NameType> {
  if (typeof options !== 'object' || options === null) {
    throw new LockConfigError(`${WHERE} needs an options object with a client and a key function.`);
  }
  checkJobLockOptionKeys(WHERE, options);
  const {
    client,
    key,
    limit = 1,
    onLocked = 'delay',
    leaseMs,
    heartbeatMs,
    maxDelays = 100,
    context,
  } = options;
  if (!isLockClient(client)) {
    throw new LockConfigError(
      `${WHERE}: options.client must be a LockClient from @latch/core (new LockClient({ store })), got ${describe(client)}.`,
    );
  }
  if (typeof key !== 'function') {
    throw new LockConfigError(
      `${WHERE}: options.key must be a function (job) => string | undefined naming the lock a job needs, got ${describe(key)}.`,
    );
  }
  checkLimit(limit);
  if (onLocked !== 'delay' && onLocked !== 'fail') {
    throw new LockConfigError(
      `${WHERE}: options.onLocked must be 'delay' or 'fail', got ${describe(onLocked)}.`,
    );
  }
  if (leaseMs !== undefined)
    checkPositiveMs(
      'leaseMs',
      leaseMs,
      " A job lock must expire so that a crashed worker's job can run again.",
    );
  if (heartbeatMs !== undefined) checkPositiveMs('heartbeatMs', heartbeatMs);
  if (heartbeatMs !== undefined && heartbeatMs >= (leaseMs ?? client.settings.leaseMs)) {
    throw new LockConfigError(
      `${WHERE}: options.heartbeatMs (${heartbeatMs}) must be shorter than the lease (${leaseMs ?? client.settings.leaseMs} ms), or the lease ends before it is renewed.`,
    );
  }
  if (leaseMs === undefined && !Number.isFinite(client.settings.leaseMs)) {
    throw new LockConfigError(
      `${WHERE}: the client's leaseMs is Infinity (fail-closed locks); pass a finite options.leaseMs so that a crashed worker's job can run again.`,
    );
  }
  const baseMs = options.backoff?.baseMs ?? 1000;
  const maxMs = options.backoff?.maxMs ?? 30_000;
  checkPositiveMs('backoff.baseMs', baseMs);
  checkPositiveMs('backoff.maxMs', maxMs);
  if (maxMs < baseMs) {
    throw new LockConfigError(
      `${WHERE}: options.backoff.maxMs (${maxMs}) must be at least backoff.baseMs (${baseMs}).`,
    );
  }
  if (
    typeof maxDelays !== 'number' ||
    !(maxDelays === Number.POSITIVE_INFINITY || (Number.isInteger(maxDelays) && maxDelays >= 0))
  ) {
    throw new LockConfigError(
      `${WHERE}: options.maxDelays must be a whole number >= 0 or Infinity, got ${describe(maxDelays)}.`,
    );
  }
  if (context !== undefined && typeof context !== 'function') {
    throw new LockConfigError(
      `${WHERE}: options.context must be a function (job) => string, got ${describe(context)}.`,
    );
  }
  return {
    client,
    key,
    limit,
    onLocked,
    leaseMs,
    heartbeatMs,
    backoff: { baseMs, maxMs },
    maxDelays,
    context: context ?? ((job) => `${job.queueName} job ${job.id} (${job.name})`),
  };
}

// Duck-typed so that two installed copies of @latch/core still work together.
function isLockClient(value: unknown): value is LockClient {
  const candidate = value as Partial<LockClient> | null | undefined;
  return (
    typeof candidate?.tryAcquire === 'function' &&
    typeof candidate.inspect === 'function' &&
    typeof candidate.settings?.leaseMs === 'number'
  );
}

// The same bounds as core's `limit`, checked here too so that a bad value stops the worker at
// start-up rather than failing its first job.
const MAX_LIMIT = 100;

function checkLimit(limit: unknown): void {
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new LockConfigError(
      `${WHERE}: options.limit must be a whole number from 1 to ${MAX_LIMIT} (how many jobs of one key may run at once), got ${describe(limit)}. ` +
        'Leave it out for one job of a key at a time.',
    );
  }
}

function checkPositiveMs(name: string, value: unknown, why = ''): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new LockConfigError(
      `${WHERE}: options.${name} must be a positive, finite number of milliseconds, got ${describe(value)}.${why}`,
    );
  }
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'undefined')
    return String(value);
  if (typeof value === 'function') return 'a function';
  return Array.isArray(value) ? 'an array' : `a ${value.constructor?.name ?? 'object'}`;
}
