import type { LockStore } from '../contract/lock-store.js';
import { LeaseProtocol } from '../engine/cas/lease-protocol.js';
import { engineFactoryOf, type LeaseEngine } from '../engine/lease-engine.js';
import { CLOCK_OPTION_KEYS, resolveClock } from '../shared/clock.js';
import { LockConfigError } from '../shared/errors.js';
import type { LockEventListener } from '../shared/lock-events.js';
import { checkOptionKeys } from '../shared/option-keys.js';
import { defaultOwnerId } from '../shared/owner-id.js';
import { RETRY_OPTION_KEYS, resolveRetry } from '../shared/retry.js';
import { checkDuration, describe } from '../shared/validation.js';
import {
  CLIENT_OPTION_KEYS,
  type LockClientOptions,
  type ResolvedClientSettings,
  resolveHeartbeat,
} from './lock-options.js';

/** A LockClient's parts, made from its options once they are checked. */
export interface ClientSetup {
  engine: LeaseEngine;
  owner: string;
  settings: ResolvedClientSettings;
  onEvent: LockEventListener | undefined;
}

/**
 * Checks a LockClient's options (before any request is sent) and builds its lease engine: the
 * compare-and-swap protocol over a LockStore, or the engine a strategy store brings.
 */
export function setUpClient(options: LockClientOptions): ClientSetup {
  if (typeof options !== 'object' || options === null) {
    throw new LockConfigError('new LockClient(options) needs an options object with a store.');
  }
  checkOptionKeys('new LockClient()', options, CLIENT_OPTION_KEYS);
  if (typeof options.clock === 'object') {
    checkOptionKeys('new LockClient({ clock })', options.clock, CLOCK_OPTION_KEYS);
  }
  checkOptionKeys('new LockClient({ retry })', options.retry, RETRY_OPTION_KEYS);
  const { store } = options;
  const isStore = (candidate: unknown): candidate is LockStore =>
    typeof (candidate as LockStore | undefined)?.read === 'function' &&
    typeof (candidate as LockStore | undefined)?.write === 'function';
  const createEngine = engineFactoryOf(store);
  if (!createEngine && !isStore(store)) {
    throw new LockConfigError(
      'LockClient needs a store: memoryStore(), s3Store({ client, bucket }), dynamoStore({ client, table }) or s3ListStore({ client, bucket }).',
    );
  }
  const leaseMs = checkDuration('leaseMs', options.leaseMs ?? 30_000, { allowInfinity: true });
  const heartbeatMs = resolveHeartbeat(options.heartbeatMs, leaseMs, 'heartbeatMs');
  const pollMs = checkDuration('pollMs', options.pollMs ?? 1000);
  // Two polls' worth: with nobody else waiting, a yield leaves the lock free for about one
  // pollMs, so local throughput keeps about two thirds, while another process's waiter gets
  // the lock within about three pollMs of a turn starting.
  const localTurnMs = checkDuration('localTurnMs', options.localTurnMs ?? 2 * pollMs, {
    allowInfinity: true,
  });
  if (
    options.owner !== undefined &&
    (typeof options.owner !== 'string' || options.owner.length === 0 || options.owner.length > 256)
  ) {
    throw new LockConfigError(
      `owner must be a non-empty string of at most 256 characters, got ${describe(options.owner)}.`,
    );
  }
  if (options.onEvent !== undefined && typeof options.onEvent !== 'function') {
    throw new LockConfigError(`onEvent must be a function, got ${describe(options.onEvent)}.`);
  }
  const owner = options.owner ?? defaultOwnerId();
  const settings = { leaseMs, heartbeatMs, pollMs, localTurnMs };
  const environment = {
    clock: resolveClock(options.clock),
    retry: resolveRetry(options.retry),
    owner,
  };
  const engine = createEngine
    ? createEngine(environment)
    : new LeaseProtocol(store as LockStore, environment.clock, environment.retry, owner);
  engine.checkLeaseMs(leaseMs);
  return { engine, owner, settings, onEvent: options.onEvent };
}
