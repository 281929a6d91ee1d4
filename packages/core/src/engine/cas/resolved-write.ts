import type { LockRecord, VersionedRecord } from '../../contract/lock-record.js';
import type { WriteCondition } from '../../contract/lock-store.js';
import { LockCorruptedError, LockStoreError } from '../../shared/errors.js';
import { withRetry } from '../../shared/retry.js';
import type { CasParts } from './cas-parts.js';

// A conditional write whose outcome is never guessed: an ambiguous failure is settled by reading
// the record back and recognising our own write, or reported as unknown.

/**
 * Conditional write with retries; an ambiguous failure is settled by reading the record back.
 * `unsure` on a failure: the write may have landed before the record moved on (it cannot
 * land any more). When the record has not moved, the write may still land later: that stays
 * an unknown outcome (a LockStoreError with maybeApplied), never a "not applied".
 */
export async function writeResolved(
  parts: CasParts,
  key: string,
  record: LockRecord,
  condition: WriteCondition,
  isOurs: (found: LockRecord) => boolean,
  signal?: AbortSignal,
): Promise<
  | { ok: true; version: string; found?: LockRecord }
  | { ok: false; current?: VersionedRecord | null; unsure?: boolean }
> {
  let unsure: LockStoreError | undefined;
  try {
    const outcome = await withRetry(
      parts.retry,
      parts.clock.time,
      () => parts.store.write(key, record, condition),
      signal,
    );
    if (outcome.ok) {
      parts.known.remember(key, { version: outcome.version, record }, true, parts.clock.time.monotonic());
      return outcome;
    }
    if (!outcome.maybeApplied) {
      if (outcome.current !== undefined)
        parts.known.remember(key, outcome.current, false, parts.clock.time.monotonic());
      return outcome.current === undefined ? { ok: false } : { ok: false, current: outcome.current };
    }
  } catch (error) {
    if (!(error instanceof LockStoreError && error.maybeApplied)) throw error;
    unsure = error;
  }
  // The request may or may not have been applied: look at the record to know.
  const current = await readAfterUnknownOutcome(parts, key, unsure, signal);
  if (current && isOurs(current.record)) {
    parts.known.remember(key, current, true, parts.clock.time.monotonic());
    return { ok: true, version: current.version, found: current.record };
  }
  const unchanged =
    'absent' in condition ? current === null : current !== null && current.version === condition.version;
  if (unchanged) throw stillUnknown(key, unsure);
  return { ok: false, current, unsure: true };
}

/** Reads after a write of unknown outcome; a failed read leaves the outcome unknown, and says so. */
export async function readAfterUnknownOutcome(
  parts: CasParts,
  key: string,
  unsure: LockStoreError | undefined,
  signal?: AbortSignal,
): Promise<VersionedRecord | null> {
  try {
    return await parts.read(key, signal);
  } catch (error) {
    if (error instanceof LockCorruptedError) throw error;
    throw stillUnknown(key, unsure ?? error, error);
  }
}

/** A write whose outcome stays unknown: it may have been applied, or may still be. */
export function stillUnknown(key: string, cause?: unknown, readError?: unknown): LockStoreError {
  const why = readError
    ? 'and reading the record back failed too'
    : 'and the record shows no sign of it yet, so it may still land';
  const failure = readError ?? cause;
  return new LockStoreError(
    `A write to lock "${key}" may or may not have been applied (${cause instanceof Error ? cause.message : 'no answer'}) ${why}. Latch treats the outcome as unknown and acts on the safe side.`,
    {
      cause: failure,
      retryable: true,
      maybeApplied: true,
      // Whatever made the write's outcome unknown (or the read-back fail) is the failure to report.
      reason: failure instanceof LockStoreError ? failure.reason : 'unavailable',
    },
  );
}
