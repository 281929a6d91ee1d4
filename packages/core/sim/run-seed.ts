import { holdersOf } from '../src/engine/cas/slot-records.js';
import { type AppliedWrite, SimBackend } from './backend.js';
import { Checker, type Violation } from './checkers.js';
import { makeRunConfig, type RunConfig } from './config.js';
import { type CoreBuild, currentBuild } from './core-build.js';
import { HolderWrites } from './holder-writes.js';
import { type RunContext, Workload } from './operations.js';
import type { Rng } from './rng.js';
import { makeLockClient, type PendingCall, SimClient } from './sim-client.js';
import { SimNetwork } from './sim-network-store.js';
import { SimProcess } from './sim-scheduler.js';
import { bump, emptyStats, type SimStats } from './stats.js';
import { Trace } from './trace.js';
import { settle, World } from './world.js';

export interface SeedOptions {
  /** Simulated minutes of workload and faults (the quiet phase comes on top). */
  minutes: number;
  /** Fold every trace entry into a hash (to compare two runs of one seed). */
  hashTrace?: boolean;
  /** Print every trace entry as it happens. */
  echo?: (line: string) => void;
  /** Trace entries kept for the report. */
  traceCapacity?: number;
  /** Violations to count and pass over (see CheckerSettings.ignore). */
  ignore?: RegExp | undefined;
  /**
   * A released build of core to run beside this checkout's (a mixed-version rollout): client
   * slot 0 starts on it, slot 1 on the current build, every other incarnation (restarts too,
   * so upgrades and rollbacks) on either, drawn from its own stream.
   */
  released?: CoreBuild | undefined;
}

export interface SeedResult {
  seed: number;
  config: RunConfig;
  stats: SimStats;
  violation: Violation | undefined;
  trace: Trace;
}

/** Where the run's unhandled rejections go: the checker of the seed running now. */
let current: Checker | undefined;
export function reportUnhandled(kind: string, error: unknown): void {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  if (current) current.fail(kind, message);
  else throw error;
}

/** Quiet-phase slack for a call that began after faults stopped. */
const QUIET_BOUND_MS = 3000;

/**
 * One seed, start to end:
 * 1. active phase (`minutes`): the workload, network faults, partitions, pauses, crashes,
 *    restarts, closes and (untrusted clocks) clock jumps;
 * 2. faults stop; the workload stops starting calls and campaigns stop; once every late
 *    request has landed and every pause and partition is over, the quiet phase checks that
 *    waiters are served and that locks taken away learn it within the tight bounds;
 * 3. every live client is closed; waiting calls must settle, close() must return, and no key
 *    may stay held by a lease of a closed client;
 * 4. time runs past every finite lease: only a crashed client's fail-closed lock may remain.
 */
export async function runSeed(seed: number, options: SeedOptions): Promise<SeedResult> {
  const config = makeRunConfig(seed, options.minutes);
  const world = new World(seed);
  const stats = emptyStats();
  stats.seeds = 1;
  if (!config.exclusionChecked) stats.exclusionSkipped = 1;
  const trace = new Trace(options.traceCapacity ?? 4000, options.hashTrace ?? false, options.echo);
  const maxLease = config.maxLeaseMs;
  const lateApplyMaxMs = 3 * maxLease;
  // Pauses and partitions last at most this long (see the process faults below).
  const maxFaultMs = 3 * maxLease;
  // Every late request landed, every pause and partition over.
  const quietFrom = config.activeMs + Math.max(config.requestTimeoutMs + lateApplyMaxMs, maxFaultMs) + 1000;
  // Long enough for every tight bound of the quiet phase to have passed (taken-away locks
  // learn it, free keys get claimed) before the clients close.
  const closeAt = quietFrom + Math.max(15_000, 2 * maxLease);
  const closeBoundMs = 10_000;
  const endAt = closeAt + closeBoundMs + 3 * maxLease + 5000;
  const checker = new Checker(world, {
    exclusionChecked: config.exclusionChecked,
    limits: config.limits,
    requestTimeoutMs: config.requestTimeoutMs,
    quietFrom,
    ignore: options.ignore,
  });
  current = checker;

  /** When each holder of each key was last written (its lease is timed from there). */
  const holderWrites = new HolderWrites();
  const backend = new SimBackend(config.flavor, (write: AppliedWrite) => {
    holderWrites.record(write, world.now);
    checker.applied(write);
  });

  const clients: SimClient[] = [];
  const incarnations = new Map<string, SimClient>();
  const buildOf = (slot: number, incarnation: number, id: string): CoreBuild => {
    const released = options.released;
    if (!released) return currentBuild;
    if (incarnation === 0 && slot <= 1) return slot === 0 ? released : currentBuild;
    return world.stream(`build:${id}`).chance(0.5) ? released : currentBuild;
  };
  const spawn = (slot: number, incarnation: number): SimClient => {
    const slotConfig = config.clients[slot]!;
    const id = `c${slot}.${incarnation}`;
    const clock = { ...slotConfig.clock };
    if (incarnation > 0) clock.monoOrigin = world.stream(`mono:${id}`).real(1_000, 10_000_000);
    const process = new SimProcess(world, id, clock, world.stream(`client:${id}`), (error) =>
      checker.fail('uncaught-exception', `a timer callback in ${id} threw: ${String(error)}`),
    );
    const network = new SimNetwork(
      world,
      process,
      backend,
      {
        requestTimeoutMs: config.requestTimeoutMs,
        faultsUntil: config.activeMs,
        rates: config.rates,
        lateApplyMaxMs,
      },
      world.stream(`net:${id}`),
      stats,
      trace,
    );
    const build = buildOf(slot, incarnation, id);
    const client = new SimClient(
      slot,
      incarnation,
      slotConfig,
      process,
      network,
      makeLockClient(build, slotConfig, process, network),
    );
    clients[slot] = client;
    incarnations.set(id, client);
    const on = build === currentBuild ? '' : `, ${build.name} core`;
    trace.add(world.now, id, '-', `starts (${slotConfig.clockMode}, lease ${slotConfig.leaseMs}${on})`);
    return client;
  };
  for (let slot = 0; slot < config.clients.length; slot++) spawn(slot, 0);

  const context: RunContext = {
    world,
    config,
    checker,
    trace,
    stats,
    clients,
    quietFrom,
    watch: (call) => watchCall(call),
    closeClient: (client) => closeClient(client),
  };
  const workload = new Workload(context);

  // ---- liveness of waiting calls ---------------------------------------------------------

  /** How long one claim attempt may take with this client's retries while faults are on. */
  const faultBound = (client: SimClient) =>
    8 * client.config.retry.attempts * (config.requestTimeoutMs + client.config.retry.maxMs) + 1000;
  const watchCall = (call: PendingCall) => {
    if (!Number.isFinite(call.waitMs)) return; // checked at close and by the starvation check
    const slack = (call.quiet ? QUIET_BOUND_MS : faultBound(call.client)) * call.claims;
    let deadline = call.startedAt + call.waitMs + slack;
    const check = () => {
      if (!call.waiting || call.client.process.crashed) return;
      const paused = call.client.process.pausedMs() - call.pausedAtStart;
      if (world.now < deadline + paused) {
        deadline += paused;
        call.pausedAtStart = call.client.process.pausedMs();
        world.at(deadline, check);
        return;
      }
      checker.checks++;
      checker.fail(
        'liveness',
        `${call.kind} of "${call.key}" in ${call.client.id} with waitMs ${Math.round(call.waitMs)} started at ${call.startedAt.toFixed(0)} has not settled ${Math.round(world.now - call.startedAt)} ms later`,
      );
    };
    world.at(deadline, check);
  };

  // ---- process faults --------------------------------------------------------------------

  const faultRng = world.stream('process-faults');
  const countFault = (kind: string, who: string, what: string) => {
    bump(stats.faults, kind);
    trace.add(world.now, who, '-', `fault ${kind}: ${what}`);
  };
  const poisson = (rng: Rng, perMin: number, each: (slot: number) => void) => {
    if (perMin <= 0) return;
    for (let slot = 0; slot < config.clients.length; slot++) {
      let t = rng.exp(60_000 / perMin);
      while (t < config.activeMs) {
        const at = t;
        world.at(at, () => each(slot));
        t += rng.exp(60_000 / perMin);
      }
    }
  };
  const restart = (slot: number, afterMs: number) => {
    world.after(afterMs, () => {
      const old = clients[slot]!;
      if (old.state !== 'closed' && old.state !== 'crashed') return;
      if (world.now >= config.activeMs) return; // the quiet phase keeps who is left
      spawn(slot, old.incarnation + 1);
    });
  };
  const pf = config.processFaults;
  poisson(faultRng, pf.partitionsPerMin, (slot) => {
    const client = clients[slot]!;
    if (!client.usable) return;
    const ms = faultRng.real(0.3, 3) * client.config.leaseMs;
    client.network.partitionedUntil = Math.max(client.network.partitionedUntil, world.now + ms);
    countFault('partition', client.id, `${Math.round(ms)} ms`);
  });
  poisson(faultRng, pf.flakyLinksPerMin, (slot) => {
    const client = clients[slot]!;
    if (!client.usable) return;
    const ms = faultRng.real(0.2, 2) * client.config.leaseMs;
    client.network.flakyUntil = Math.max(client.network.flakyUntil, world.now + ms);
    countFault('flaky-link', client.id, `${Math.round(ms)} ms`);
  });
  poisson(faultRng, pf.pausesPerMin, (slot) => {
    const client = clients[slot]!;
    if (!client.usable || client.process.paused) return;
    const ms = faultRng.chance(0.5) ? faultRng.real(10, 500) : faultRng.real(0.5, 3) * client.config.leaseMs;
    client.process.pause();
    countFault('pause', client.id, `event loop blocked ${Math.round(ms)} ms`);
    world.after(ms, () => {
      trace.add(world.now, client.id, '-', 'pause ends');
      client.process.resume();
    });
  });
  poisson(faultRng, pf.crashesPerMin, (slot) => {
    const client = clients[slot]!;
    if (client.state === 'crashed') return;
    client.process.crash();
    client.state = 'crashed';
    countFault('crash', client.id, 'process killed');
    restart(slot, faultRng.real(500, 20_000));
  });
  /** A graceful close while faults are on, watched, then the slot restarts. */
  const closeClient = (client: SimClient) => {
    if (!client.usable) return;
    void workload.close(client).then(() => restart(client.slot, faultRng.real(100, 5000)));
    watchClose(client);
  };
  poisson(faultRng, pf.closesPerMin, (slot) => {
    const client = clients[slot]!;
    if (!client.usable) return;
    client.process.after(0, () => closeClient(client));
  });
  /** When each machine's clock was last stepped back. */
  const steppedBackAt = new Map<SimClient['process'], number>();
  poisson(faultRng, pf.clockJumpsPerMin, (slot) => {
    const client = clients[slot]!;
    // A suspended machine runs no time daemon: its clock is stepped once it is awake.
    if (client.process.suspended) return;
    const jump = faultRng.pick([-1, 1]) * faultRng.real(100, 3_600_000);
    client.process.jumpMs += jump;
    if (jump < 0) steppedBackAt.set(client.process, world.now);
    countFault('clock-jump', client.id, `${Math.round(jump)} ms`);
  });

  // Machine suspends, from their own stream: the other faults of a seed stay where they were.
  const suspendRng = world.stream('suspends');
  poisson(suspendRng, pf.suspendsPerMin, (slot) => {
    const client = clients[slot]!;
    if (!client.usable || client.process.paused) return;
    const ms = suspendRng.real(0.5, 3) * client.config.leaseMs;
    // A clock stepped back shortly before a suspend hides it from the core as a step during it
    // does (a window the core README lists): no suspend follows a step back until every writer
    // of the machine has surely looked at its clocks since (a renewal, a watch or an answer).
    const stepped = steppedBackAt.get(client.process);
    if (stepped !== undefined && world.now - stepped < maxLease + config.requestTimeoutMs) return;
    client.process.suspend();
    countFault('suspend', client.id, `machine suspended ${Math.round(ms)} ms (monotonic clock stopped)`);
    world.after(ms, () => {
      trace.add(world.now, client.id, '-', 'suspend ends');
      client.process.wake();
    });
  });

  // ---- close, and what it must leave behind ----------------------------------------------

  const watchClose = (client: SimClient) => {
    const calledAt = world.now;
    // A close during faults may wait for requests in flight (each bounded by the retry policy).
    const bound = calledAt >= quietFrom ? closeBoundMs : faultBound(client) + closeBoundMs;
    world.at(calledAt + bound, () => {
      if (client.process.crashed) return;
      checker.checks++;
      if (!client.closeSettled) {
        checker.fail(
          'liveness',
          `close() of ${client.id} called at ${calledAt.toFixed(0)} has not returned ${bound} ms later`,
        );
        return;
      }
      for (const call of client.pending) {
        if (!call.waiting) continue;
        checker.fail(
          'liveness',
          `${call.kind} of "${call.key}" in ${client.id} (waitMs ${Number.isFinite(call.waitMs) ? Math.round(call.waitMs) : 'Infinity'}, started at ${call.startedAt.toFixed(0)}) never settled, though close() returned`,
        );
      }
      // close() ends every campaign: a term it led ended (its signal aborted, onDemoted ran)
      // and the campaign's `done` settled, for the key may already have another leader.
      for (const [, lock] of client.terms) {
        checker.fail(
          'liveness',
          `a campaign in ${client.id} still leads "${lock.key}" (term ${lock.fencingToken}: onDemoted never ran), though close() returned`,
        );
      }
      for (const lock of client.termsAtClose) {
        if (lock.signal.aborted) continue;
        checker.fail(
          'liveness',
          `${client.id} led "${lock.key}" (term ${lock.fencingToken}) when close() was called, and the term's signal never aborted`,
        );
      }
      if (client.campaigns.size > 0) {
        checker.fail(
          'liveness',
          `${client.campaigns.size} campaign(s) in ${client.id} never settled \`done\`, though close() returned`,
        );
      }
    });
  };

  /** When `key` had (or will have) room for a waiter, by the record last written. */
  // Only trusted clients read stored expiry times, and only those of trusted holders.
  const trustedOffsets = config.clients
    .filter((c) => c.clockMode === 'trusted')
    .map((c) => Math.abs(c.clock.offsetMs));
  const clockSlack = trustedOffsets.length === 0 ? 0 : 2 * Math.max(...trustedOffsets) + 1000;
  const maxTolerance = Math.max(...config.clients.map((c) => c.toleranceMs));
  const maxPoll = Math.max(...config.clients.map((c) => c.pollMs));
  const claimableSince = (key: string): number => {
    const record = backend.peek(key);
    if (!record) return 0;
    // A lock: free, or its holder's lease surely over; a semaphore: fewer holders than its limit.
    return holderWrites.roomSince(key, record, (holder, writtenAt) =>
      holder.leaseMs === null
        ? Number.POSITIVE_INFINITY
        : writtenAt + holder.leaseMs * 1.01 + maxTolerance + maxPoll + clockSlack,
    );
  };
  const starveBound = 7 * maxPoll + QUIET_BOUND_MS;
  const checkStarvation = () => {
    if (world.now >= closeAt) return;
    for (const key of config.keys) {
      checker.checks++;
      const since = claimableSince(key);
      if (world.now - since < starveBound) continue;
      for (const client of clients) {
        if (!client.usable || client.process.paused) continue;
        // Waiters queue behind local holders that fill every slot without polling: if one was
        // taken away, they wait until it learns so (the taken-away check bounds that).
        let local = 0;
        for (const e of checker.liveEntries()) if (e.key === key && e.client === client) local++;
        if (local >= checker.limitOf(key)) continue;
        // An untrusted waiter counts a lease from when it first sees the record: one that could
        // not see it before the quiet phase (paused, partitioned) waits a full lease from there.
        const holder = backend.peek(key)?.holder;
        // So does a trusted waiter facing a holder on untrusted clocks (it stores no expiry).
        const byWatching =
          config.clients[client.slot]?.clockMode === 'untrusted' || holder?.expiresAt === null;
        const untrustedFrom =
          byWatching && holder?.leaseMs ? quietFrom + holder.leaseMs * 1.01 + maxTolerance + maxPoll : 0;
        if (world.now - Math.max(since, untrustedFrom) < starveBound) continue;
        for (const call of client.pending) {
          if (call.key !== key || !call.waiting || call.startedAt > since) continue;
          checker.fail(
            'liveness',
            `"${key}" has been claimable since ${since.toFixed(0)} (faults over), yet ${call.kind} in ${client.id} started at ${call.startedAt.toFixed(0)} is still waiting at ${world.now.toFixed(0)}`,
          );
        }
      }
    }
    world.after(250, checkStarvation);
  };

  const closeEveryone = () => {
    for (const client of clients) {
      if (!client.usable) continue;
      client.process.after(0, () => {
        if (!client.usable) return;
        void workload.close(client);
        watchClose(client);
      });
    }
  };

  /** Once every client closed: no unexpired lease may belong to a closed client. */
  const checkLeftBehind = (final: boolean) => {
    for (const key of backend.keys()) {
      const record = backend.peek(key);
      // A lock's holder, or each holder of a semaphore.
      for (const holder of record ? holdersOf(record) : []) {
        checker.checks++;
        const process = checker.leaseProcess.get(holder.lockId) ?? holder.owner;
        const crashed = incarnations.get(process)?.process.crashed ?? false;
        const known = checker.handedLockIds.has(holder.lockId)
          ? 'handed to user code'
          : 'never handed to user code';
        if (holder.leaseMs === null) {
          if (final && !crashed) {
            checker.fail(
              'left-held',
              `"${key}" is held for ever by fail-closed lease ${holder.lockId} of ${process}, which was closed, not crashed (${known})`,
            );
          }
          continue;
        }
        const expired = world.now > holderWrites.writtenAt(key, holder) + holder.leaseMs * 1.01 + 100;
        if (expired || crashed || checker.lockAtLeastIds.has(holder.lockId)) continue;
        checker.fail(
          'left-held',
          `every client has closed, yet "${key}" is held by ${holder.lockId} of ${process} until its lease ends (${known})`,
        );
      }
    }
  };

  // ---- phases ----------------------------------------------------------------------------

  workload.start();
  world.at(config.activeMs, () => {
    trace.add(world.now, 'sim', '-', 'faults and workload stop');
    workload.stop();
    workload.stopAllCampaigns();
  });
  world.at(quietFrom, () => {
    trace.add(world.now, 'sim', '-', 'quiet phase');
    checkStarvation();
  });
  world.at(closeAt, () => {
    trace.add(world.now, 'sim', '-', 'closing every client');
    closeEveryone();
  });
  world.at(closeAt + closeBoundMs, () => checkLeftBehind(false));
  world.at(endAt, () => checkLeftBehind(true));

  // ---- the driver ------------------------------------------------------------------------

  for (;;) {
    if (checker.violation) break;
    const event = world.queue.pop();
    if (!event || event.at > endAt) break;
    if (event.cancelled) continue;
    world.now = event.at;
    world.steps++;
    try {
      event.run();
    } catch (error) {
      checker.fail(
        'uncaught-exception',
        error instanceof Error ? (error.stack ?? error.message) : String(error),
      );
    }
    await settle((world.steps & 255) === 0);
    checker.afterStep();
  }
  await settle(true);
  checker.finish();
  current = undefined;
  stats.checks = checker.checks;
  stats.ignored = checker.ignored;
  stats.coverage = { ...checker.coverage };
  stats.seen = {
    'locks handed': checker.seen.handed.lock,
    'live lock holders': checker.seen.live.lock,
    'slots handed': checker.seen.handed.semaphore,
    'live slot holders': checker.seen.live.semaphore,
  };
  stats.steps = world.steps;
  stats.simulatedMs = world.now;
  return { seed, config, stats, violation: checker.violation, trace };
}
