import type { RequestTally } from '../counting/request-tally.js';
import type { SemaphoreClient, SemaphoreClientOptions } from './semaphore-client.js';

/** A lock held by a subject; `release` gives it up. */
export interface HeldLock {
  release(): Promise<void>;
}

/**
 * One lock library, set up inside a worker process, behind the one operation every scenario
 * needs. Each subject counts the requests it sends to its store in `requests`.
 */
export interface LockSubject {
  /** Waits until `key` is held; rejects with the signal's reason once `signal` aborts. */
  acquire(key: string, signal: AbortSignal): Promise<HeldLock>;
  readonly requests: RequestTally;
  /**
   * A new client of the subject's store that can take semaphores, its requests counted in
   * `requests`; absent when the library has none. Each call makes another client, so two of
   * them in one process act like two processes.
   */
  newSemaphoreClient?(options?: SemaphoreClientOptions): SemaphoreClient;
  close(): Promise<void>;
}

/**
 * Races an attempt the library cannot cancel against `signal`. When the signal wins, the
 * attempt keeps running inside the library; if it later acquires, `discard` releases it so
 * an abandoned acquisition does not block the key.
 */
export function untilAborted<T>(
  attempt: Promise<T>,
  signal: AbortSignal,
  discard: (value: T) => unknown,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const onAbort = () => {
      settled = true;
      reject(signal.reason);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    attempt.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (!settled) {
          settled = true;
          resolve(value);
        } else {
          void Promise.resolve()
            .then(() => discard(value))
            .catch(() => undefined);
        }
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (!settled) {
          settled = true;
          reject(error);
        }
      },
    );
  });
}
