import { LockConfigError, LockStoreError } from './errors.js';
import type { Scheduler } from './scheduler.js';
import { sleep } from './sleep.js';

export interface RetryOptions {
  /** Attempts in all, including the first (default 6). */
  attempts?: number;
  /** First backoff in ms, doubled each time (default 50). */
  baseMs?: number;
  /** Largest backoff in ms (default 2000). */
  maxMs?: number;
}

/** Every key of RetryOptions: the compiler fails here when one is added or dropped. */
const RETRY_OPTIONS: Record<keyof RetryOptions, true> = { attempts: true, baseMs: true, maxMs: true };
export const RETRY_OPTION_KEYS: readonly string[] = Object.keys(RETRY_OPTIONS);

export interface RetryPolicy {
  attempts: number;
  baseMs: number;
  maxMs: number;
}

export function resolveRetry(options: RetryOptions | undefined): RetryPolicy {
  const policy = { attempts: 6, baseMs: 50, maxMs: 2000, ...options };
  if (!Number.isInteger(policy.attempts) || policy.attempts < 1) {
    throw new LockConfigError(`retry.attempts must be an integer >= 1, got ${policy.attempts}.`);
  }
  if (!(policy.baseMs > 0) || !(policy.maxMs >= policy.baseMs)) {
    throw new LockConfigError('retry.baseMs must be > 0 and retry.maxMs >= retry.baseMs.');
  }
  return policy;
}

/** Full-jitter exponential backoff: a random wait in [0, min(max, base * 2^attempt)]. */
export function backoffMs(policy: RetryPolicy, attempt: number, random: () => number): number {
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** attempt);
  return Math.max(1, Math.round(random() * ceiling));
}

/**
 * Runs `operation` again while it fails with a retryable store error that was certainly not
 * applied (throttling, 409 conflicts between concurrent conditional requests, network errors
 * on reads). Errors that may have been applied are returned to the caller to resolve.
 */
export async function withRetry<T>(
  policy: RetryPolicy,
  scheduler: Scheduler,
  operation: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      const retryable = error instanceof LockStoreError && error.retryable && !error.maybeApplied;
      if (!retryable || attempt + 1 >= policy.attempts || signal?.aborted) throw error;
      await sleep(scheduler, backoffMs(policy, attempt, scheduler.random), signal, { keepAlive: true });
    }
  }
}
