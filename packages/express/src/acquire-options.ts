import { type AcquireOptions, LockConfigError, type SpanAttributes } from '@latch/core';
import type { MiddlewareSettings } from './options.js';

/**
 * The options one request passes to `client.acquire`. Built in one place so that `lock()` can
 * have the client check, when the middleware is created, exactly what every request will pass.
 */
export function acquireOptionsFor(
  settings: MiddlewareSettings,
  request: { method: string; route?: unknown },
  signal: AbortSignal,
): AcquireOptions {
  // The span attributes of the lock's telemetry: the route template (never the URL, which may
  // carry ids), the method, and the lock's name.
  const attributes: SpanAttributes = {
    'http.request.method': request.method,
    'latch.lock.name': settings.name,
  };
  if (typeof request.route === 'string') attributes['http.route'] = request.route;
  const options: AcquireOptions = { context: `${request.method} ${settings.name}`, attributes };
  if (settings.leaseMs !== undefined) options.leaseMs = settings.leaseMs;
  if (settings.limit !== undefined) options.limit = settings.limit;
  // A single try cannot be cancelled, so it takes no signal.
  if (settings.waitMs === 0) return { ...options, waitMs: 0 };
  // A store that is down fails this request at once with its LockStoreError (→ 503 or 500), where
  // waiting would keep retrying it and end in a 423.
  return { ...options, waitMs: settings.waitMs, signal, failFastOnStoreError: true };
}

/**
 * Has the client check these options as `acquire` would — against its store too (a `limit`
 * the store cannot keep) — when the middleware is created, so a mistake stops the app from
 * starting rather than failing requests. Core's message says what is wrong and how to fix it;
 * the prefix says which `lock()` it came from.
 */
export function checkAcquireOptions(settings: MiddlewareSettings): void {
  // Each request's context is "<method> <name>"; the longest method names are short, so any one stands in.
  const sample = acquireOptionsFor(settings, { method: 'GET', route: '/' }, new AbortController().signal);
  try {
    settings.client.checkAcquireOptions(sample);
  } catch (error) {
    if (!(error instanceof LockConfigError)) throw error;
    throw new LockConfigError(`lock() for ${JSON.stringify(settings.name)}: ${error.message}`);
  }
}
