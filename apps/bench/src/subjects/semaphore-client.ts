import type { HeldLock } from './lock-subject.js';

/** Settings of a new semaphore client; unset ones keep the library's defaults. */
export interface SemaphoreClientOptions {
  /** Lease length in ms (heartbeats come every third of it). */
  leaseMs?: number;
}

/**
 * What the semaphore scenario needs of a library: acquire with a limit, and several keys at
 * once. Only Latch offers it here: no peer library has a semaphore on S3 or DynamoDB.
 */
export interface SemaphoreClient {
  /** Renewals of held leases so far (heartbeats that landed). */
  readonly renewals: number;
  /** Leases lost so far (a renewal found the place taken, or could not land before the lease ended). */
  readonly lost: number;
  /** Waits until one of `limit` places on `key` is held; rejects with the signal's reason once it aborts. */
  acquire(key: string, limit: number, signal: AbortSignal): Promise<HeldLock>;
  /** Waits until every key is held (all or none); releasing gives them all back. */
  acquireAll(keys: readonly string[], signal: AbortSignal): Promise<HeldLock>;
}
