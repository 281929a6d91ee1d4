import { MAX_LIMIT } from '../engine/cas/slot-records.js';
import type { LeaseEngine } from '../engine/lease-engine.js';
import { LockConfigError } from '../shared/errors.js';
import { checkContext, checkDuration, checkLease, checkSignal, describe } from '../shared/validation.js';
import { checkSpanAttributes, type SpanAttributes } from '../telemetry/span-attributes.js';
import type { LockSettings } from './lock.js';
import { type AcquireOptions, type ResolvedClientSettings, resolveHeartbeat } from './lock-options.js';

/** One call's acquisition: how many may hold the key, the lock's settings (its context too), and its signal. */
export interface AcquireRequest {
  limit: number;
  settings: LockSettings;
  signal?: AbortSignal;
  /** Recorded on the acquisition's spans. */
  attributes?: SpanAttributes;
}

/**
 * Checks the options of one acquire (before any request is sent) and resolves them against the
 * client's settings: the lease, the heartbeat (a per-call lease without a per-call heartbeat
 * renews at a third of that lease), context, signal and hooks.
 */
export function prepareAcquire(
  options: AcquireOptions,
  engine: LeaseEngine,
  settings: ResolvedClientSettings,
  verifyMs: number,
): AcquireRequest {
  if (typeof options !== 'object' || options === null)
    throw new LockConfigError('Acquire options must be an object.');
  const leaseMs = checkLease('leaseMs', options.leaseMs ?? settings.leaseMs);
  engine.checkLeaseMs(leaseMs);
  // A per-call lease without a per-call heartbeat renews at a third of that lease, unless the client turned renewal off.
  const inherited =
    settings.heartbeatMs === false || options.leaseMs === undefined ? settings.heartbeatMs : undefined;
  const heartbeatMs = resolveHeartbeat(
    options.heartbeatMs !== undefined ? options.heartbeatMs : inherited,
    leaseMs,
    'heartbeatMs',
  );
  const context = checkContext(options.context);
  const signal = checkSignal('signal', options.signal);
  if (options.onLost !== undefined && typeof options.onLost !== 'function') {
    throw new LockConfigError(`onLost must be a function, got ${describe(options.onLost)}.`);
  }
  if (options.failFastOnStoreError !== undefined && typeof options.failFastOnStoreError !== 'boolean') {
    throw new LockConfigError(
      `failFastOnStoreError must be true or false, got ${describe(options.failFastOnStoreError)}.`,
    );
  }
  const lockAtLeastMs =
    options.lockAtLeastMs === undefined ? undefined : checkDuration('lockAtLeastMs', options.lockAtLeastMs);
  const limit = checkLimit(options.limit);
  engine.checkLimit(limit);
  const attributes = checkSpanAttributes(options.attributes);
  const request: AcquireRequest = {
    limit,
    settings: { leaseMs, heartbeatMs, onLost: options.onLost, lockAtLeastMs, verifyMs, context },
  };
  if (signal) request.signal = signal;
  if (attributes) request.attributes = attributes;
  return request;
}

/** The `limit` option: a whole number of holders from 1 (a lock, the default) to MAX_LIMIT. */
export function checkLimit(value: unknown): number {
  if (value === undefined) return 1;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_LIMIT) {
    throw new LockConfigError(
      `limit must be a whole number from 1 (a lock) to ${MAX_LIMIT}, got ${describe(value)}. It is how many may hold the key at once.`,
    );
  }
  return value;
}
