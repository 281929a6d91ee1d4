import type { LockStore } from '../contract/lock-store.js';
import { LeaseProtocol } from '../engine/cas/lease-protocol.js';
import { StoreCheck } from '../engine/cas/store-check.js';
import { engineFactoryOf, type LeaseEngine } from '../engine/lease-engine.js';
import { CLOCK_OPTION_KEYS, resolveClock } from '../shared/clock.js';
import { LockConfigError } from '../shared/errors.js';
import { type LockEventListener, type LockEventReport, reportEvent } from '../shared/lock-events.js';
import { checkOptionKeys } from '../shared/option-keys.js';
import { defaultOwnerId } from '../shared/owner-id.js';
import { RETRY_OPTION_KEYS, resolveRetry } from '../shared/retry.js';
import { checkDuration, checkLease, describe } from '../shared/validation.js';
import { instrumentStore } from '../telemetry/instrumented-store.js';
import { createLockTelemetry, type LockTelemetry } from '../telemetry/lock-telemetry.js';
import { checkTelemetryOptions } from '../telemetry/telemetry-options.js';
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
  /** OpenTelemetry spans and metrics; undefined when off or @opentelemetry/api is not installed. */
  telemetry: LockTelemetry | undefined;
}

/**
 * Checks a LockClient's options (before any request is sent) and builds its lease engine: the
 * compare-and-swap protocol over a LockStore, or the engine a strategy store brings.
 */
export function setUpClient(
  options: LockClientOptions,
  report: (event: LockEventReport) => void,
): ClientSetup {
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
  const leaseMs = checkLease('leaseMs', options.leaseMs ?? 30_000);
  const heartbeatMs = resolveHeartbeat(options.heartbeatMs, leaseMs, 'heartbeatMs');
  const pollMs = checkDuration('pollMs', options.pollMs ?? 1000);
  // One poll's worth: another process's waiter polls when the turn should end (OtherTurn), so a
  // yield costs about a round trip while others wait, and each of them waits about a turn; with
  // nobody else waiting a yield leaves the lock free for about pollMs, and turns stretch.
  const localTurnMs = checkDuration('localTurnMs', options.localTurnMs ?? pollMs, {
    allowInfinity: true,
  });
  // Longer than a network blip of ten seconds, shorter than an API gateway's 29 s timeout.
  const storeErrorWaitMs = checkDuration('storeErrorWaitMs', options.storeErrorWaitMs ?? 20_000, {
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
  const telemetryOptions = checkTelemetryOptions(options.telemetry);
  const owner = options.owner ?? defaultOwnerId();
  const settings = { leaseMs, heartbeatMs, pollMs, localTurnMs, storeErrorWaitMs };
  const environment = {
    clock: resolveClock(options.clock),
    retry: resolveRetry(options.retry),
    owner,
  };
  const time = environment.clock.time;
  const telemetry = createLockTelemetry(telemetryOptions, store.kind, () => time.monotonic());
  // Store requests are counted on a LockStore; a strategy store's engine makes its own.
  const protocolStore =
    telemetry && !createEngine ? instrumentStore(store as LockStore, telemetry) : (store as LockStore);
  // The check on first use (s3Store's `verify`) sends its requests through the counted store too.
  const storeCheck = createEngine ? undefined : new StoreCheck(protocolStore, options.clock, report);
  const engine = createEngine
    ? createEngine(environment)
    : new LeaseProtocol(protocolStore, environment.clock, environment.retry, owner, storeCheck);
  engine.checkLeaseMs(leaseMs);
  return { engine, owner, settings, onEvent: bothListeners(options.onEvent, telemetry?.onEvent), telemetry };
}

/** The caller's listener and the telemetry's, each called on its own so that one throwing skips nothing. */
function bothListeners(
  first: LockEventListener | undefined,
  second: LockEventListener | undefined,
): LockEventListener | undefined {
  if (!first || !second) return first ?? second;
  return (event) => {
    reportEvent(first, event);
    reportEvent(second, event);
  };
}
