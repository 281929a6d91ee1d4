import { LockLostError, LockStoreError } from '../../shared/errors.js';

// What a writer's caller hears when its change or release did not go through: the machine says
// why (`failed` actions); these say it in words, with the store's own error where it said more.

/** Why a caller's write failed, as the machine's `failed` action says. */
export interface WriteFailure {
  readonly why: 'lost' | 'unknown' | 'refused';
  readonly maybeApplied: boolean;
}

/** What the store said last: the error of a write of unknown outcome, and of one it refused. */
export interface StoreSaid {
  readonly unknown: unknown;
  readonly refused: LockStoreError | undefined;
}

/** An extend or update that did not go through. */
export function changeFailed(key: string, failure: WriteFailure, said: StoreSaid): Error {
  if (failure.why === 'unknown') {
    if (said.unknown instanceof LockStoreError && said.unknown.maybeApplied) return said.unknown;
    return new LockStoreError(
      `The store did not say whether the change to lock "${key}" landed; the lock is still held, and trusted only as long as the shorter of the two leases.`,
      { retryable: true, maybeApplied: true, reason: 'unavailable' },
    );
  }
  if (failure.why === 'lost') {
    return new LockLostError(key, 'its lease ended before the change was confirmed', {
      maybeApplied: failure.maybeApplied,
    });
  }
  return (
    said.refused ??
    new LockStoreError(`The store refused to renew lock "${key}"; it is still held as before.`, {
      retryable: true,
      reason: 'unavailable',
    })
  );
}

/** A release that did not go through. */
export function releaseFailed(key: string, failure: WriteFailure, said: StoreSaid): Error {
  if (failure.why === 'lost') {
    return new LockLostError(key, 'it was no longer held when released', {
      maybeApplied: failure.maybeApplied,
    });
  }
  if (failure.why === 'unknown') {
    return new LockStoreError(
      `The store did not say whether lock "${key}" was released; it is settled in the background (release again to wait for it).`,
      { retryable: true, maybeApplied: true, reason: 'unavailable' },
    );
  }
  return (
    said.refused ??
    new LockStoreError(`The store refused to release lock "${key}"; it is still held.`, {
      retryable: true,
      reason: 'unavailable',
    })
  );
}

/** What a caller hears when a write's outcome stays unknown and no error of the store says more. */
export function noAnswer(): LockStoreError {
  return new LockStoreError('The store did not answer.', { retryable: true, maybeApplied: true });
}
