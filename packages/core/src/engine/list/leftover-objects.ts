import { LockStoreError } from '../../shared/errors.js';
import { type RetryPolicy, withRetry } from '../../shared/retry.js';
import type { Scheduler } from '../../shared/scheduler.js';
import type { ListBucket } from './list-bucket.js';

/**
 * Our own objects a failed delete left behind, per lock. The list strategy never leaves them:
 * a delete that fails for a retryable reason is remembered and tried again on the lock's next
 * request; any other failure is reported at once.
 */
export class LeftoverObjects {
  private readonly byLock = new Map<string, Set<string>>();

  constructor(
    private readonly bucket: ListBucket,
    private readonly retry: RetryPolicy,
    private readonly time: Scheduler,
  ) {}

  of(key: string): Set<string> {
    let set = this.byLock.get(key);
    if (!set) {
      set = new Set();
      this.byLock.set(key, set);
    }
    return set;
  }

  /** Deletes our own objects; one that cannot be deleted now is kept to try again later. */
  async deleteQuietly(key: string, objectKeys: string[]): Promise<void> {
    for (const objectKey of objectKeys) {
      try {
        await withRetry(this.retry, this.time, () => this.bucket.delete(objectKey));
        this.byLock.get(key)?.delete(objectKey);
      } catch (error) {
        // Throttling or a network failure: try again later. Denied access or the like: say so now.
        if (!(error instanceof LockStoreError && error.retryable)) throw error;
        this.of(key).add(objectKey);
      }
    }
  }

  async deleteAll(key: string, keep?: string): Promise<void> {
    const set = this.byLock.get(key);
    if (!set) return;
    this.byLock.delete(key);
    await this.deleteQuietly(
      key,
      [...set].filter((objectKey) => objectKey !== keep),
    );
  }
}
