import { LockStoreError } from '../shared/errors.js';

/**
 * A key's store failures in a row, as its poller meets them: when the streak began and how
 * many tries failed. Throttling does not start or lengthen it: the store answered, and asked
 * for patience. Any answer ends it.
 */
export class FailureStreak {
  /** Monotonic time the first failed try of the streak was sent. */
  private since: number | undefined;
  private failures = 0;

  /** Failed tries in the streak so far. */
  get count(): number {
    return this.failures;
  }

  /** Records a try sent at `sentAt` that failed with `error` at `now`; true once the streak has lasted `limitMs`. */
  failed(error: unknown, sentAt: number, now: number, limitMs: number): boolean {
    if (error instanceof LockStoreError && error.reason === 'throttled') return false;
    this.since ??= sentAt;
    this.failures++;
    return now - this.since >= limitMs;
  }

  clear(): void {
    this.since = undefined;
    this.failures = 0;
  }
}
