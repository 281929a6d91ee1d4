import { checkOptionKeys, type LockClient, LockConfigError, type LockTimeoutError } from '@latch/core';
import type { NextFunction, Request, Response } from 'express';
import { checkLockName } from './route-key.js';

/**
 * Runs instead of the default answer (423, or 429 under `limit`) when the lock stays held. It
 * may answer, or call `next()` / `next(error)`. `lockErrorToHttp(error)` from @latch/core/http
 * gives the standard answer; `error.limit` is set when the route has a `limit`.
 */
export type LockedHandler = (
  error: LockTimeoutError,
  req: Request,
  res: Response,
  next: NextFunction,
) => void | Promise<void>;

export interface LockMiddlewareOptions {
  /** The LockClient that takes the locks (its store decides where they live). */
  client: LockClient;
  /**
   * The resource the route locks, such as 'invoice': every key of this middleware lives under
   * `<name>/`. Routes that must exclude each other (PUT and DELETE of one invoice) share a name.
   * Letters, digits, '_' and '-', in segments joined by '/'.
   */
  name: string;
  /**
   * Which resource this request touches, usually from the request (`(req) => req.params.id`).
   * Treated as untrusted: it is escaped into one segment under `name`. It must give a
   * non-empty string; anything else (a missing or repeated parameter) is answered with 400.
   */
  key: (req: Request) => unknown;
  /**
   * What to do when another request holds the lock (or `limit` requests hold it): 'wait'
   * (default) waits up to `waitMs` then answers 423 (429 under `limit`); 'reject' answers at
   * once; a function runs instead of that answer (after waiting `waitMs`, default 0).
   */
  onLocked?: 'wait' | 'reject' | LockedHandler;
  /** How long to wait for a held lock, in ms (default 10 000 under 'wait', 0 otherwise). Infinity waits until the client goes away. */
  waitMs?: number;
  /** Lease length for these locks (default: the client's). Renewed in the background while the request runs. */
  leaseMs?: number;
  /**
   * How many requests may hold one key at once, across every replica (default 1: one at a
   * time). An integer from 1 to 100. Over the limit a request waits or is answered 429 Too
   * Many Requests with Retry-After, as `onLocked` says. Every route and replica that locks
   * the same `name` must give the same limit.
   */
  limit?: number;
  /**
   * What Retry-After says in a 423 Locked answer, in whole seconds (default 1): the holder is
   * another request, which usually ends long before its lease would. Never more than the
   * holder's lease has left. (429 and 503 answers say 1.)
   */
  retryAfterSeconds?: number;
}

export interface MiddlewareSettings {
  client: LockClient;
  name: string;
  key: (req: Request) => unknown;
  /** Set when the caller gave a handler; otherwise core's answer (423, or 429 under a limit) is sent. */
  onLocked: LockedHandler | undefined;
  waitMs: number;
  leaseMs: number | undefined;
  limit: number | undefined;
  retryAfterSeconds: number;
}

/** Every option of lock(): the compiler fails here when one is added to LockMiddlewareOptions but not listed. */
const MIDDLEWARE_OPTIONS: Record<keyof LockMiddlewareOptions, true> = {
  client: true,
  name: true,
  key: true,
  onLocked: true,
  waitMs: true,
  leaseMs: true,
  limit: true,
  retryAfterSeconds: true,
};
const MIDDLEWARE_OPTION_KEYS = Object.keys(MIDDLEWARE_OPTIONS);

const DEFAULT_WAIT_MS = 10_000;
/** A request-scoped lock is usually free again within a second. */
const DEFAULT_RETRY_AFTER_SECONDS = 1;

/**
 * Checks the adapter's own options when the middleware is created, so a request never meets a
 * configuration error. What the options pass on to core (`limit`, …) the client checks next,
 * as acquire would (see checkAcquireOptions).
 */
export function resolveOptions(options: LockMiddlewareOptions): MiddlewareSettings {
  if (typeof options !== 'object' || options === null) {
    throw new LockConfigError('lock(options) needs an object: lock({ client, name, key }).');
  }
  checkOptionKeys('lock()', options, MIDDLEWARE_OPTION_KEYS, {
    store:
      'lock() takes a client built on the store: lock({ client: new LockClient({ store }), name, key }).',
  });
  const {
    client,
    name,
    key,
    onLocked = 'wait',
    waitMs,
    leaseMs,
    limit,
    retryAfterSeconds = DEFAULT_RETRY_AFTER_SECONDS,
  } = options;
  if (typeof client?.acquire !== 'function' || typeof client.checkAcquireOptions !== 'function') {
    throw new LockConfigError(
      'lock({ client }) needs a LockClient from @latch/core: new LockClient({ store }).',
    );
  }
  checkLockName(name);
  if (typeof key !== 'function') {
    throw new LockConfigError(
      `lock({ key }) needs a function of the request returning the resource id, such as (req) => req.params.id; got ${typeof key}.`,
    );
  }
  if (onLocked !== 'wait' && onLocked !== 'reject' && typeof onLocked !== 'function') {
    throw new LockConfigError(
      `lock({ onLocked }) must be 'wait', 'reject' or a function (error, req, res, next); got ${JSON.stringify(onLocked)}.`,
    );
  }
  if (waitMs !== undefined && !(typeof waitMs === 'number' && waitMs >= 0)) {
    throw new LockConfigError(
      `lock({ waitMs }) must be 0 or more milliseconds (Infinity to wait until the client goes away); got ${String(waitMs)}.`,
    );
  }
  if (onLocked === 'reject' && waitMs !== undefined && waitMs !== 0) {
    throw new LockConfigError(
      `lock({ onLocked: 'reject' }) never waits, but waitMs is ${waitMs}; use onLocked: 'wait' to wait up to waitMs.`,
    );
  }
  if (leaseMs !== undefined && !(typeof leaseMs === 'number' && leaseMs > 0)) {
    throw new LockConfigError(
      `lock({ leaseMs }) must be a positive number of milliseconds (or Infinity); got ${String(leaseMs)}.`,
    );
  }
  if (
    !(typeof retryAfterSeconds === 'number' && Number.isInteger(retryAfterSeconds) && retryAfterSeconds >= 1)
  ) {
    throw new LockConfigError(
      `lock({ retryAfterSeconds }) must be a whole number of seconds, at least 1; got ${String(retryAfterSeconds)}.`,
    );
  }
  return {
    client,
    name,
    key,
    onLocked: typeof onLocked === 'function' ? onLocked : undefined,
    waitMs: waitMs ?? (onLocked === 'wait' ? DEFAULT_WAIT_MS : 0),
    leaseMs,
    limit,
    retryAfterSeconds,
  };
}
