import type { Campaign } from '../src/client/campaign.js';
import type { Lock } from '../src/client/lock.js';
import type { LockClient } from '../src/client/lock-client.js';
import type { AcquireOptions } from '../src/client/lock-options.js';
import type { ClientInfo } from './checkers.js';
import type { ClientSlotConfig } from './config.js';
import type { CoreBuild } from './core-build.js';
import type { SimNetwork } from './sim-network-store.js';
import type { SimProcess } from './sim-scheduler.js';

/** A call of user code still waiting for core, watched by the liveness checks. */
export interface PendingCall {
  kind: string;
  key: string;
  client: SimClient;
  startedAt: number;
  waitMs: number;
  /**
   * Claims the call may still make once its wait is over (its liveness slack is counted this
   * many times): 1, or for acquireAll one per key plus the release of those it took.
   */
  claims: number;
  /** Started once faults had stopped (the tight bound applies). */
  quiet: boolean;
  /** Still waiting for a lock (withLock stops waiting when its body starts). */
  waiting: boolean;
  pausedAtStart: number;
}

/**
 * One incarnation of a client slot: a process (clocks, event loop) with its own network to the
 * shared store, and the real LockClient running in it. A crash or a close ends the incarnation;
 * a restart is a new one (new owner id, new monotonic origin, same machine clock).
 */
export class SimClient implements ClientInfo {
  state: 'live' | 'closing' | 'closed' | 'crashed' = 'live';
  readonly pending = new Set<PendingCall>();
  readonly campaigns = new Set<Campaign>();
  /** The term each campaign leads now: from onElected until its onDemoted. */
  readonly terms = new Map<Campaign, Lock<unknown>>();
  /** Campaigns user code stopped (their terms end by stop(), not by close()). */
  readonly stoppedCampaigns = new Set<Campaign>();
  /**
   * Terms whose onElected threw: the campaign resigns them at once (a release, which aborts no
   * signal, then onDemoted), so close() called meanwhile finds them no longer led.
   */
  readonly resigningTerms = new WeakSet<Lock<unknown>>();
  /** The terms led when close() was called by campaigns not stopped: close() must end each. */
  termsAtClose: Lock<unknown>[] = [];
  closeCalledAt: number | undefined;
  closeSettled = false;
  /**
   * acquireAll's own acquisitions, by the context of the call: each gets every lock that call's
   * acquire of one key resolved with (see `tapSetAcquisitions`).
   */
  readonly setTaps = new Map<string, (lock: Lock<unknown>) => void>();

  constructor(
    readonly slot: number,
    readonly incarnation: number,
    readonly config: ClientSlotConfig,
    readonly process: SimProcess,
    readonly network: SimNetwork,
    readonly client: LockClient,
  ) {
    tapSetAcquisitions(client, this.setTaps);
  }

  get id(): string {
    return this.process.id;
  }

  get pollMs(): number {
    return this.config.pollMs;
  }

  /** Can user code start something here now? */
  get usable(): boolean {
    return this.state === 'live' && !this.process.crashed;
  }

  /** Sleeps on this process's own timers (user code waits as core does). */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.process.scheduler.setTimer(resolve, ms));
  }
}

/** The LockClient of a slot's incarnation, of the given build of core, configured as the slot says. */
export function makeLockClient(
  build: CoreBuild,
  config: ClientSlotConfig,
  process: SimProcess,
  network: SimNetwork,
): LockClient {
  return build.makeClient({
    store: network.store,
    owner: process.id,
    leaseMs: config.leaseMs,
    ...(config.heartbeatMs === undefined ? {} : { heartbeatMs: config.heartbeatMs }),
    pollMs: config.pollMs,
    ...(config.localTurnMs === undefined ? {} : { localTurnMs: config.localTurnMs }),
    retry: config.retry,
    clock: { mode: config.clockMode, toleranceMs: config.toleranceMs, time: process.scheduler },
  });
}

/**
 * Lets the checkers see every lock an acquireAll call takes, including those it releases again
 * before it throws (they never reach user code). acquireAll takes each key through the
 * client's own `acquire`, with the call's options (its `context` too): wrapping that method on
 * this one instance hands each lock it resolves with to the tap registered under the call's
 * context, before acquireAll itself sees it. Should core stop going through `acquire`, the taps
 * see nothing and every returned set fails the lock-set check: the wrap cannot go blind silently.
 */
function tapSetAcquisitions(client: LockClient, taps: Map<string, (lock: Lock<unknown>) => void>): void {
  const acquire = client.acquire.bind(client);
  client.acquire = (<T>(key: string, options?: AcquireOptions) => {
    const attempt = acquire<T>(key, options);
    const tap = options?.context === undefined ? undefined : taps.get(options.context);
    if (tap)
      attempt.then(
        (lock) => tap(lock as Lock<unknown>),
        () => undefined,
      );
    return attempt;
  }) as LockClient['acquire'];
}
