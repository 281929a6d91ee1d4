import { type AcquireOptions, type Lock, type LockClient, LockConfigError } from '@latch/core';
import type { Job, Processor } from 'bullmq';
import { handleContention } from './contention.js';
import { describe, type JobLockOptions, resolveJobLockOptions } from './options.js';

/** What a locked processor gets besides the job. */
export interface JobLockContext {
  /** The lock this job holds (`fencingToken`, `data`, ...), or undefined when `key(job)` returned undefined. */
  lock: Lock | undefined;
  /** Aborts when the lock is lost (reason: a LockLostError) or BullMQ cancels the job. Pass it to your work. */
  signal: AbortSignal;
  /** BullMQ's token for this run of the job, for calls such as `job.moveToDelayed(timestamp, token)`. */
  token: string | undefined;
}

/** A processor that runs while holding its job's lock. */
export type LockedProcessor<DataType = unknown, ResultType = unknown, NameType extends string = string> = (
  job: Job<DataType, ResultType, NameType>,
  context: JobLockContext,
) => Promise<ResultType>;

/**
 * Wraps `processor` so that jobs with the same `key(job)` never run at the same time (or no more
 * than `limit` of them), across every worker and process that shares the lock store. The lock is
 * taken with one try (never holding a worker slot to wait), renewed while the job runs, and
 * released when it ends. A job that finds its key held (all `limit` slots taken) goes back to
 * the delayed set (or fails, with `onLocked: 'fail'`).
 */
export function withLock<DataType = unknown, ResultType = unknown, NameType extends string = string>(
  processor: LockedProcessor<DataType, ResultType, NameType>,
  options: JobLockOptions<DataType, ResultType, NameType>,
): Processor<DataType, ResultType, NameType> {
  if (typeof processor !== 'function') {
    throw new LockConfigError(
      `withLock(processor, options) needs a processor function (job, { lock, signal, token }) => result, got ${describe(processor)}.`,
    );
  }
  const settings = resolveJobLockOptions(options);
  const acquireOptions = {
    // Left out at 1, so that plain job locks ask core exactly what they always did.
    ...(settings.limit > 1 && { limit: settings.limit }),
    ...(settings.leaseMs !== undefined && { leaseMs: settings.leaseMs }),
    ...(settings.heartbeatMs !== undefined && { heartbeatMs: settings.heartbeatMs }),
  };
  checkWithClient(settings.client, acquireOptions);

  // Three parameters, so that BullMQ passes its cancellation signal.
  return async function lockedProcessor(job, token, signal) {
    const jobSignal = signal ?? new AbortController().signal;
    const key = settings.key(job);
    if (key === undefined) return processor(job, { lock: undefined, signal: jobSignal, token });
    if (typeof key !== 'string') {
      throw new LockConfigError(
        `options.key(job) must return a string or undefined, got ${describe(key)} for job ${job.id}.`,
      );
    }
    const lock = await settings.client.tryAcquire(key, {
      ...acquireOptions,
      context: settings.context(job),
      attributes: jobAttributes(job),
    });
    if (!lock) return handleContention(job, token, key, settings);

    let result: ResultType;
    try {
      result = await processor(job, { lock, signal: AbortSignal.any([lock.signal, jobSignal]), token });
    } catch (error) {
      await lock.release().catch(() => undefined);
      throw error;
    }
    try {
      await lock.release();
    } catch (error) {
      // Lost while the job ran: its work was not exclusive, so the job must not count as done.
      if (isLockLost(error)) throw error;
      // Any other release failure is retried by core in the background until it lands or the
      // lease ends; the job's work stands.
    }
    return result;
  };
}

/**
 * Core checks the options against the client and its store without a request (a `limit` the S3
 * list strategy cannot keep, say), so such a mistake stops the worker at start-up rather than
 * failing its first job.
 */
function checkWithClient(client: LockClient, acquireOptions: AcquireOptions): void {
  try {
    client.checkAcquireOptions(acquireOptions);
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code !== 'LOCK_CONFIG') throw error;
    throw new LockConfigError(`withLock(processor, options): ${(error as Error).message}`);
  }
}

// By code rather than class, so that two installed copies of @latch/core still agree.
function isLockLost(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'LOCK_LOST';
}

/** The lock's span attributes (core's telemetry), named as BullMQ's own telemetry names them. */
function jobAttributes(job: Job): Record<string, string> {
  const attributes: Record<string, string> = {
    'bullmq.queue.name': job.queueName,
    'bullmq.job.name': job.name,
  };
  if (typeof job.id === 'string') attributes['bullmq.job.id'] = job.id;
  return attributes;
}
