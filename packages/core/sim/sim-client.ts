import type { Campaign } from '../src/client/campaign.js';
import { LockClient } from '../src/client/lock-client.js';
import type { ClientInfo } from './checkers.js';
import type { ClientSlotConfig } from './config.js';
import type { SimNetwork } from './sim-network-store.js';
import type { SimProcess } from './sim-scheduler.js';

/** A call of user code still waiting for core, watched by the liveness checks. */
export interface PendingCall {
  kind: string;
  key: string;
  client: SimClient;
  startedAt: number;
  waitMs: number;
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
  closeCalledAt: number | undefined;
  closeSettled = false;

  constructor(
    readonly slot: number,
    readonly incarnation: number,
    readonly config: ClientSlotConfig,
    readonly process: SimProcess,
    readonly network: SimNetwork,
    readonly client: LockClient,
  ) {}

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

/** The LockClient of a slot's incarnation, configured as the slot says. */
export function makeLockClient(
  config: ClientSlotConfig,
  process: SimProcess,
  network: SimNetwork,
): LockClient {
  return new LockClient({
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
