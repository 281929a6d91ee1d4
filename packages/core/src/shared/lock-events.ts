import type { HolderSummary, LockCorruptedError, LockLostError } from './errors.js';

/** Fields every lock event carries. */
interface LockEventBase {
  key: string;
  /** The owner id of the client that saw the event (this process's client). */
  owner: string;
  /** Wall-clock time of the event, ms since epoch. */
  at: number;
}

/**
 * What a LockClient reports through its `onEvent` option: for dashboards, metrics and logs.
 * Events are reported after the fact and never change what the lock does.
 */
export type LockEvent =
  | (LockEventBase & {
      type: 'acquired';
      fencingToken: number;
      expiresAt: number | null;
      context?: string | undefined;
    })
  | (LockEventBase & { type: 'renewed'; fencingToken: number; expiresAt: number | null })
  | (LockEventBase & { type: 'released'; fencingToken: number })
  | (LockEventBase & { type: 'lost'; fencingToken: number; error: LockLostError })
  /** An `acquire` started waiting; `holder` is who held the key when last seen, if known. */
  | (LockEventBase & { type: 'waiting'; holder?: HolderSummary | undefined })
  /**
   * A waiting `acquire` tried the store and the store failed (it could not be reached, or
   * answered with an error; throttling is not reported). `failures` counts the failed tries in a
   * row for this key; `retryInMs` is the pause before the next, or undefined when the waiters
   * gave up (`storeErrorWaitMs` ran out, or the error cannot be retried) and rejected with `error`.
   */
  | (LockEventBase & {
      type: 'storeFailed';
      error: unknown;
      failures: number;
      retryInMs: number | undefined;
    })
  /**
   * An acquisition nobody waits for any more (a claim whose outcome was unknown, a lease lost
   * while a write was in flight) could not be settled: the store kept failing. A finite lease
   * still runs out by itself; a fail-closed one needs forceRelease.
   */
  | (LockEventBase & { type: 'unsettled'; error: unknown })
  /**
   * `list()` left out a key whose record cannot be read: a corrupted record, or something under
   * the store's prefix that is not a lock record. `error` says which key and why.
   */
  | (LockEventBase & { type: 'unreadable'; error: LockCorruptedError })
  /**
   * The store's clock is further from this client's than `clock.toleranceMs` allows trusted
   * clocks to be, as measured when the client first checked the store (s3Store's `verify`);
   * `offsetMs` bounds the offset (server minus local). `key` is the lock whose acquire ran the check.
   */
  | (LockEventBase & {
      type: 'clockSkew';
      offsetMs: { low: number; high: number };
      toleranceMs: number;
      detail: string;
    })
  /**
   * An attempt ended without the lock: `tryAcquire` found it held ('busy'), `acquire` ran out
   * of `waitMs` ('timeout'), or its signal aborted the wait ('aborted').
   */
  | (LockEventBase & {
      type: 'contended';
      reason: 'busy' | 'timeout' | 'aborted';
      holder?: HolderSummary | undefined;
    });

/** A lock event before the client stamps it with its owner and the time. */
export type LockEventReport = WithoutStamp<LockEvent>;
type WithoutStamp<E> = E extends unknown ? Omit<E, 'owner' | 'at'> : never;

export type LockEventListener = (event: LockEvent) => void;

/** Calls the listener, shielding the lock from a listener that throws. */
export function reportEvent(listener: LockEventListener | undefined, event: LockEvent): void {
  if (!listener) return;
  try {
    listener(event);
  } catch {
    // A broken dashboard must not break locking.
  }
}
