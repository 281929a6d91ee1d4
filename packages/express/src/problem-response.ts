import { checkOptionKeys, LockConfigError, LockLimitMismatchError, LockStoreError } from '@latch/core';
import { type LockHttpAnswer, lockErrorToHttp, lockStoreLogEntry } from '@latch/core/http';
import type { ErrorRequestHandler, Request, Response } from 'express';
import { limitMismatchLog } from './limit-mismatch-log.js';

/** Sends one of core's HTTP answers: status, headers (Retry-After, problem+json) and body. */
export function sendProblem(res: Response, answer: LockHttpAnswer): void {
  res.status(answer.status).set(answer.headers).json(answer.body);
}

/**
 * Called with every lock store failure `lockErrorHandler()` answers, before it answers. The
 * HTTP answer never carries the cause (the client is not the operator), so this is where it
 * reaches the operator: `error.reason` says which kind ('misconfigured', 'denied',
 * 'unavailable', 'throttled', 'closed', 'unknown'), `error.message` what failed, `error.cause`
 * the AWS SDK's error. Core's `lockStoreLogEntry(error)` gives a ready log line and level.
 */
export type StoreErrorHook = (error: LockStoreError, req: Request) => void;

export interface LockErrorHandlerOptions {
  /**
   * What to do with a lock store failure besides answering it (log it, count it, alert).
   * Default: one line to `console.error`, at most once per distinct cause every 10 seconds
   * (the next line says how many were left out). Credentials never appear in it.
   */
  onStoreError?: StoreErrorHook;
}

/** Distinct causes remembered for the repeat window; the oldest are forgotten first. */
const MAX_CAUSES = 100;
/** How long the default hook stays quiet about a cause it has just logged. */
const REPEAT_WINDOW_MS = 10_000;

/**
 * Error middleware that answers Latch errors the standard way, each with an RFC 9457
 * problem+json body — a lock store outage (unreachable, throttled) 503 with Retry-After, a
 * lock store set up wrong (missing bucket or table, no or rejected credentials, access
 * denied) 500, a lock lost mid-request 409, a held lock 423 (429 when its limit is reached),
 * a bad key 400, routes or replicas that lock one key with different limits 500 — and passes
 * every other error on. Store failures also go to `onStoreError` (default: logged to
 * console.error); a limit mismatch is logged to console.error, once per key and pair of limits.
 */
export function lockErrorHandler(options: LockErrorHandlerOptions = {}): ErrorRequestHandler {
  const onStoreError = resolveOnStoreError(options);
  const logLimitMismatch = limitMismatchLog();
  return (error, req, res, next) => {
    const answer = lockErrorToHttp(error);
    if (!answer || res.headersSent) {
      next(error);
      return;
    }
    if (error instanceof LockStoreError) {
      try {
        onStoreError(error, req);
      } catch (hookError) {
        next(hookError);
        return;
      }
    }
    if (error instanceof LockLimitMismatchError) logLimitMismatch(error, req);
    sendProblem(res, answer);
  };
}

function resolveOnStoreError(options: LockErrorHandlerOptions): StoreErrorHook {
  if (typeof options !== 'object' || options === null) {
    throw new LockConfigError(
      `lockErrorHandler(options) takes an object such as { onStoreError }, or nothing; got ${options === null ? 'null' : typeof options}.`,
    );
  }
  checkOptionKeys('lockErrorHandler()', options, ['onStoreError']);
  const { onStoreError } = options;
  if (onStoreError === undefined) return consoleStoreErrorLog();
  if (typeof onStoreError !== 'function') {
    throw new LockConfigError(
      `lockErrorHandler({ onStoreError }) must be a function (error, req) => void; got ${typeof onStoreError}.`,
    );
  }
  return onStoreError;
}

/**
 * The default hook: `[latch] GET /invoices/7/pay answered 500: lock store misconfigured (reason
 * misconfigured, code LOCK_STORE_NOT_FOUND): S3 PutObject for lock "invoice/7" failed: …`.
 * A cause already logged in the last 10 s is counted instead, and the count is added to the
 * next line logged for it. The query string is left out of the path (it may carry tokens).
 */
function consoleStoreErrorLog(): StoreErrorHook {
  const recent = new Map<string, { loggedAt: number; skipped: number }>();
  return (error, req) => {
    const now = Date.now();
    const cause = causeOf(error);
    const seen = recent.get(cause);
    if (seen && now - seen.loggedAt < REPEAT_WINDOW_MS) {
      seen.skipped++;
      return;
    }
    recent.delete(cause);
    // Oldest first (insertion order): a bounded map, whatever the store answers.
    for (const [key, entry] of recent) {
      if (recent.size < MAX_CAUSES && now - entry.loggedAt < REPEAT_WINDOW_MS) break;
      recent.delete(key);
    }
    recent.set(cause, { loggedAt: now, skipped: 0 });
    const status = lockErrorToHttp(error)?.status ?? 500;
    const path = (req.originalUrl ?? req.url ?? '').split('?')[0];
    const skipped = seen?.skipped ? ` (${seen.skipped} more like it not logged since the last report)` : '';
    console.error(
      `[latch] ${req.method} ${path} answered ${status}: ${lockStoreLogEntry(error).message}${skipped}`,
    );
  };
}

/**
 * What makes two store failures "the same": their kind and the name of the error at the root
 * of the cause chain (ECONNREFUSED, NoSuchBucket, …), not messages, which name the lock key.
 */
function causeOf(error: LockStoreError): string {
  let root: unknown = error;
  for (let depth = 0; depth < 10 && root instanceof Error && root.cause !== undefined; depth++) {
    root = root.cause;
  }
  const rootName = root instanceof Error ? `${root.name}:${(root as { code?: unknown }).code ?? ''}` : '';
  return `${error.reason}|${error.code}|${rootName}`;
}
