import type { LockLimitMismatchError } from '@latch/core';
import type { Request } from 'express';

/** Distinct mismatches remembered; past this the oldest is forgotten (and may be logged again). */
const MAX_MISMATCHES = 100;

/**
 * The log of `lockErrorHandler()` for a limit mismatch: routes or replicas that lock one key
 * with different limits. The 500 answer does not say which, so the operator learns it here:
 * `[latch] GET /reports/acme answered 500: lock limit mismatch: Lock "report/acme" is held
 * with limit 3, and this call asked for limit 5. …`, to console.error. Every request meeting
 * the mismatch fails the same way, so each key and pair of limits is logged once.
 */
export function limitMismatchLog(): (error: LockLimitMismatchError, req: Request) => void {
  const logged = new Set<string>();
  return (error, req) => {
    const mismatch = JSON.stringify([error.key, error.heldLimit, error.askedLimit]);
    if (logged.has(mismatch)) return;
    // Oldest first (insertion order): a bounded set, however many keys disagree.
    if (logged.size >= MAX_MISMATCHES) logged.delete(logged.values().next().value as string);
    logged.add(mismatch);
    // The query string is left out of the path (it may carry tokens).
    const path = (req.originalUrl ?? req.url ?? '').split('?')[0];
    console.error(`[latch] ${req.method} ${path} answered 500: lock limit mismatch: ${error.message}`);
  };
}
