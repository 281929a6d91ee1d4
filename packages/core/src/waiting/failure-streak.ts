import { LockStoreError } from '../shared/errors.js';

export type FailureVerdict = 'throttled' | 'counted' | 'too long';

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

  /**
   * Records a try sent at `sentAt` that failed with `error` at `now`: 'throttled' when it did
   * not count, 'too long' once the streak has lasted `limitMs`, else 'counted'.
   */
  failed(error: unknown, sentAt: number, now: number, limitMs: number): FailureVerdict {
    if (error instanceof LockStoreError && error.reason === 'throttled') return 'throttled';
    this.since ??= sentAt;
    this.failures++;
    return now - this.since >= limitMs ? 'too long' : 'counted';
  }

  clear(): void {
    this.since = undefined;
    this.failures = 0;
  }
}
