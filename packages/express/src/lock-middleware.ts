import { type Lock, LockConfigError, LockLimitMismatchError, LockTimeoutError } from '@latch/core';
import { lockErrorToHttp } from '@latch/core/http';
import type { NextFunction, Request, Response } from 'express';
import { acquireOptionsFor, checkAcquireOptions } from './acquire-options.js';
import { type LockMiddlewareOptions, type MiddlewareSettings, resolveOptions } from './options.js';
import { sendProblem } from './problem-response.js';
import { releaseInBackground, releaseWhenResponseEnds } from './release-on-end.js';
import { routeLockKey } from './route-key.js';
import './request-lock.js';

/**
 * Route middleware: takes the lock `<name>/<key(req)>` before the handler runs and releases it
 * when the response ends (sent, failed, or the client went away), exactly once.
 *
 * - Held by another request: waits or answers 423 Locked with Retry-After (see `onLocked`).
 *   With `limit`, up to that many requests hold one key at once; the next one waits or is
 *   answered 429 Too Many Requests with Retry-After.
 * - A key the request makes invalid (too long, not a string): 400 problem+json.
 * - Store failures: `next(error)` with core's LockStoreError; `lockErrorHandler()` logs it and
 *   answers 503 for an outage, 500 for a store set up wrong (missing bucket, denied access).
 * - Holders of the key with another `limit` (routes or replicas that disagree): `next(error)`
 *   with core's LockLimitMismatchError; `lockErrorHandler()` logs it and answers 500.
 *
 * Works with Express 5 and 4. Options are checked here, once, with a LockConfigError — by the
 * client too, against its store (e.g. a `limit` on a store that cannot keep one).
 */
export function lock(options: LockMiddlewareOptions): LockMiddleware {
  const settings = resolveOptions(options);
  checkAcquireOptions(settings);
  return (req, res, next) => {
    void lockRequest(settings, req as unknown as Request, res as unknown as Response, next);
  };
}

/**
 * Standard Express middleware, generic so that it fits any route: the route's own parameter
 * types (`/invoices/:id` → `req.params.id: string`) still reach the handlers after it.
 */
export type LockMiddleware = <P, ResBody, ReqBody, ReqQuery, Locals extends Record<string, unknown>>(
  req: Request<P, ResBody, ReqBody, ReqQuery, Locals>,
  res: Response<ResBody, Locals>,
  next: NextFunction,
) => void;

/** Never rejects: every failure is answered here or passed to `next`. */
async function lockRequest(
  settings: MiddlewareSettings,
  req: Request,
  res: Response,
  next: NextFunction,
): Promise<void> {
  let key: string;
  try {
    key = routeLockKey(settings.name, settings.key(req));
  } catch (error) {
    answerOrForward(error, res, next);
    return;
  }

  // A client that leaves while we wait stops the wait; nobody is left to answer.
  const clientGone = new AbortController();
  const onClose = () => clientGone.abort(new Error('The client closed the connection.'));
  res.once('close', onClose);
  let acquired: Lock;
  try {
    acquired = await acquireFor(settings, key, req, clientGone.signal);
  } catch (error) {
    res.off('close', onClose);
    if (clientGone.signal.aborted) return;
    if (error instanceof LockTimeoutError) {
      await answerLocked(settings, error, req, res, next);
      return;
    }
    answerOrForward(error, res, next);
    return;
  }
  res.off('close', onClose);
  if (clientGone.signal.aborted) {
    // Acquired just as the client left (a single try cannot be cancelled): let go at once.
    releaseInBackground(acquired);
    return;
  }
  req.lock = acquired;
  releaseWhenResponseEnds(res, acquired);
  next();
}

function acquireFor(settings: MiddlewareSettings, key: string, req: Request, signal: AbortSignal) {
  const request = { method: req.method, route: (req.route as { path?: unknown } | undefined)?.path };
  return settings.client.acquire(key, acquireOptionsFor(settings, request, signal));
}

async function answerLocked(
  settings: MiddlewareSettings,
  error: LockTimeoutError,
  req: Request,
  res: Response,
  next: NextFunction,
): Promise<void> {
  if (!settings.onLocked) {
    // 423 with Retry-After (429 when a limit was reached): core's answer, the same in every adapter.
    sendProblem(
      res,
      lockErrorToHttp(error, Date.now(), { lockedRetryAfterSeconds: settings.retryAfterSeconds })!,
    );
    return;
  }
  try {
    await settings.onLocked(error, req, res, next);
  } catch (handlerError) {
    next(handlerError);
  }
}

/**
 * A key the request made invalid is the client's fault: 400 here. Anything else is the app's to
 * answer — a limit mismatch too: like a store failure it is the server's fault, for
 * `lockErrorHandler()` to log for the operator and answer 500.
 */
function answerOrForward(error: unknown, res: Response, next: NextFunction): void {
  if (error instanceof LockConfigError && !(error instanceof LockLimitMismatchError)) {
    sendProblem(res, lockErrorToHttp(error)!);
    return;
  }
  next(error);
}
