import type { Campaign } from '../src/client/campaign.js';
import type { Lock } from '../src/client/lock.js';
import type { AcquireOptions } from '../src/client/lock-options.js';
import type { LockSet } from '../src/client/lock-set.js';
import { LockConfigError, LockStoreError } from '../src/shared/errors.js';
import { MIN_LEASE_MS } from '../src/shared/validation.js';
import {
  type Checker,
  type DataOutcome,
  dataOutcomeOf,
  type HandedLock,
  type HandedVia,
} from './checkers.js';
import type { RunConfig } from './config.js';
import { buildName, lockView } from './core-build.js';
import type { Rng } from './rng.js';
import type { PendingCall, SimClient } from './sim-client.js';
import { bump, type SimStats } from './stats.js';
import type { Trace } from './trace.js';
import type { World } from './world.js';

/** What the workload needs from the run it drives. */
export interface RunContext {
  readonly world: World;
  readonly config: RunConfig;
  readonly checker: Checker;
  readonly trace: Trace;
  readonly stats: SimStats;
  /** Current incarnation of every client slot. */
  readonly clients: SimClient[];
  /** Virtual time from which faults have stopped and tight bounds apply. */
  readonly quietFrom: number;
  /** Schedules the liveness check of a waiting call. */
  watch(call: PendingCall): void;
  /** Closes a client as user code does before its process exits (then the slot restarts). */
  closeClient(client: SimClient): void;
}

/** Thrown by user code on purpose (a withLock body or onElected that fails). */
export class SimBodyError extends Error {
  constructor(where: string) {
    super(`simulated failure in ${where}`);
    this.name = 'SimBodyError';
  }
}

/**
 * The random workload: user code calling every public operation of LockClient and Lock on
 * random clients and keys at random times, holding locks for random spans (often longer than
 * a heartbeat, sometimes several leases), writing to the fenced resource after checking
 * `isHeld`, storing unique data values, passing handles between clients. Semaphore keys are
 * always acquired with their own limit; acquireAll takes keys of one limit together.
 */
export class Workload {
  private readonly rng: Rng;
  /** Whether and when a leader closes its own client: their own stream, so the rest draws as before. */
  private readonly leaderCloses: Rng;
  /**
   * Draws for what user code does in the client that holds or claims a key (forceRelease there,
   * resume there): their own stream, so that the rest of the workload draws what it drew before.
   */
  private readonly own: Rng;
  private dataSeq = 0;
  private setSeq = 0;
  private running = true;

  constructor(private readonly run: RunContext) {
    this.rng = run.world.stream('workload');
    this.leaderCloses = run.world.stream('leader-closes');
    this.own = run.world.stream('own-client');
  }

  start(): void {
    this.scheduleNext();
    this.scheduleStorms();
  }

  /**
   * Pass storms (seeds with a storm slot): one to three times a run, the storm client's callers
   * queue by the hundred for the first lock and each holds it a few ms, so the lease passes
   * among them with no write, token by token, across renewals that top its reserve up, and
   * through a hand-over with a write when the reserve runs out. Their own stream: the rest of
   * the workload draws what it drew before.
   */
  private scheduleStorms(): void {
    const slot = this.run.config.stormSlot;
    if (slot < 0) return;
    const rng = this.run.world.stream('storms');
    const key = this.run.config.keys[0]!;
    const count = rng.int(1, 3);
    for (let i = 0; i < count; i++) {
      const at = rng.real(0.05, 0.85) * this.run.config.activeMs;
      const callers = rng.int(1500, 3000);
      this.run.world.at(at, () => {
        const client = this.run.clients[slot];
        if (!client?.usable) return;
        client.process.after(0, () => {
          if (!client.usable) return;
          this.op('storm', client, key, `${callers} callers`);
          // One caller, somewhere in the storm, reads its handle: the next gets the lock with a write.
          const readsHandle = rng.chance(0.5) ? rng.int(0, callers - 1) : -1;
          for (let n = 0; n < callers; n++) this.stormCaller(client, key, rng, n === readsHandle);
        });
      });
    }
  }

  /** One caller of a storm: waits for the lock, writes with its token, releases a few ms later. */
  /** Sends `acquire` as user code does, noting the pending call and the token floor when it began. */
  private startAcquire(client: SimClient, key: string, options: AcquireOptions) {
    const call = this.pendingCall(client, 'acquire', key, options.waitMs ?? Number.POSITIVE_INFINITY);
    const startFloor = this.run.checker.tokenFloor(key);
    let attempt: Promise<Lock<unknown>>;
    try {
      attempt = client.client.acquire(key, options);
    } catch (error) {
      attempt = Promise.reject(error);
    }
    return { call, startFloor, attempt };
  }

  private stormCaller(client: SimClient, key: string, rng: Rng, readsHandle: boolean): void {
    const options: AcquireOptions = { waitMs: Number.POSITIVE_INFINITY };
    bump(this.run.stats.ops, 'acquire');
    const { call, startFloor, attempt } = this.startAcquire(client, key, options);
    attempt.then(
      async (lock) => {
        this.settle(call);
        const entry = this.hand(lock, client, 'acquire', options, { startFloor });
        await client.sleep(rng.real(0, 2));
        if (lock.isHeld) this.run.checker.resourceWrite(entry);
        if (readsHandle) this.readHandle(entry, client);
        await this.release(entry, client, 'release');
      },
      (error) => {
        this.settle(call);
        this.run.checker.typedError('acquire', error);
      },
    );
  }

  stop(): void {
    this.running = false;
  }

  private scheduleNext(): void {
    const gap = this.rng.exp(this.run.config.meanOpGapMs);
    this.run.world.after(gap, () => {
      if (!this.running || this.run.world.now >= this.run.config.activeMs) return;
      this.startOne();
      this.scheduleNext();
    });
  }

  private op(kind: string, client: SimClient, key: string, what = ''): void {
    bump(this.run.stats.ops, kind);
    this.run.trace.add(this.run.world.now, client.id, key, `${kind}${what ? ` ${what}` : ''}`);
  }

  private note(client: SimClient, key: string, what: string): void {
    this.run.trace.add(this.run.world.now, client.id, key, what);
  }

  private startOne(): void {
    const usable = this.run.clients.filter((c) => c.usable);
    if (usable.length === 0) return;
    const client = this.rng.pick(usable);
    const key = this.rng.pick(this.run.config.keys);
    const plain = this.run.config.limits[key] === 1;
    const kind = this.rng.weighted({
      acquire: 30,
      tryAcquire: 12,
      withLock: 25,
      acquireAll: this.run.config.keyGroups.length > 0 ? 4 : 0,
      // Rarer where pass storms run, so that some storms outlast a block of reserved tokens.
      forceRelease: this.run.config.stormSlot < 0 ? 1.5 : 0.3,
      // A campaign is a plain lock: never on a semaphore's key.
      campaign: client.campaigns.size === 0 && plain ? 2 : 0,
      mismatch: 0.3,
    });
    // User code runs on its process's event loop (deferred while that loop is blocked).
    client.process.after(0, () => {
      if (!client.usable) return;
      switch (kind) {
        case 'acquire':
          return this.acquire(client, key);
        case 'tryAcquire':
          return this.tryAcquire(client, key);
        case 'withLock':
          return this.withLock(client, key);
        case 'acquireAll':
          return this.acquireAll(client);
        case 'mismatch':
          return this.mismatch(client, key);
        case 'forceRelease':
          return this.forceRelease(client, key);
        case 'campaign':
          return this.campaign(client, key);
      }
    });
  }

  // ---- acquiring -------------------------------------------------------------------------

  /** Random per-call lease options (fail-closed sometimes, lockAtLeastMs sometimes). */
  private leaseOptions(client: SimClient): Pick<AcquireOptions, 'leaseMs' | 'heartbeatMs' | 'lockAtLeastMs'> {
    const options: Pick<AcquireOptions, 'leaseMs' | 'heartbeatMs' | 'lockAtLeastMs'> = {};
    const r = this.rng.next();
    if (this.run.config.failClosed && r < 0.08) options.leaseMs = Number.POSITIVE_INFINITY;
    else if (r < 0.2) {
      options.leaseMs = this.rng.pick([1000, 2000, 4000, 8000]);
      if (this.rng.chance(0.3)) options.heartbeatMs = this.rng.chance(0.3) ? false : options.leaseMs / 4;
    }
    if (this.rng.chance(0.08)) {
      options.lockAtLeastMs = this.rng.real(100, 2 * (options.leaseMs ?? client.config.leaseMs));
      if (!Number.isFinite(options.lockAtLeastMs)) options.lockAtLeastMs = 5000;
    }
    return options;
  }

  /** The key's own limit: always for a semaphore, now and then spelled out (1) for a lock. */
  private limitOption(key: string): Pick<AcquireOptions, 'limit'> {
    const limit = this.run.config.limits[key] ?? 1;
    return limit > 1 || this.rng.chance(0.2) ? { limit } : {};
  }

  private waitOptions(client: SimClient): { waitMs: number; cancelAfter?: number; failFast: boolean } {
    const lease = client.config.leaseMs;
    const r = this.rng.next();
    const failFast = this.rng.chance(0.1);
    if (r < 0.15) return { waitMs: 0, failFast };
    if (r < 0.6) return { waitMs: this.rng.real(20, 3 * lease), failFast };
    return {
      waitMs: Number.POSITIVE_INFINITY,
      failFast,
      ...(this.rng.chance(0.6) ? { cancelAfter: this.rng.real(50, 5 * lease) } : {}),
    };
  }

  private pendingCall(client: SimClient, kind: string, key: string, waitMs: number, claims = 1): PendingCall {
    const call: PendingCall = {
      kind,
      key,
      client,
      startedAt: this.run.world.now,
      waitMs,
      claims,
      quiet: this.run.world.now >= this.run.quietFrom,
      waiting: true,
      pausedAtStart: client.process.pausedMs(),
    };
    client.pending.add(call);
    this.run.watch(call);
    return call;
  }

  private acquire(client: SimClient, key: string): void {
    const lease = this.leaseOptions(client);
    const wait = this.waitOptions(client);
    const options: AcquireOptions = { ...lease, ...this.limitOption(key), waitMs: wait.waitMs };
    if (wait.failFast) options.failFastOnStoreError = true;
    let reason: Error | undefined;
    if (wait.cancelAfter !== undefined) {
      const controller = new AbortController();
      reason = new Error('sim: the caller gave up');
      const r = reason;
      client.process.after(wait.cancelAfter, () => controller.abort(r));
      options.signal = controller.signal;
    }
    this.op('acquire', client, key, describeOptions(options));
    const { call, startFloor, attempt } = this.startAcquire(client, key, options);
    this.maybeForceWhileClaiming(client, key);
    attempt.then(
      (lock) => {
        this.settle(call);
        const entry = this.hand(lock, client, 'acquire', options, { startFloor });
        void this.hold(entry, client, true);
      },
      (error) => {
        this.settle(call);
        this.note(client, key, `acquire failed: ${errorName(error)}`);
        this.run.checker.typedError('acquire', error, reason ? [reason] : []);
        this.notRefused('acquire', client, key, error);
      },
    );
  }

  private tryAcquire(client: SimClient, key: string): void {
    const options: AcquireOptions = { ...this.leaseOptions(client), ...this.limitOption(key) };
    this.op('tryAcquire', client, key, describeOptions(options));
    const call = this.pendingCall(client, 'tryAcquire', key, 0);
    const startFloor = this.run.checker.tokenFloor(key);
    let attempt: Promise<Lock<unknown> | null>;
    try {
      attempt = client.client.tryAcquire(key, options);
    } catch (error) {
      attempt = Promise.reject(error);
    }
    this.maybeForceWhileClaiming(client, key);
    attempt.then(
      (lock) => {
        this.settle(call);
        if (!lock) {
          this.note(client, key, 'tryAcquire: busy');
          return;
        }
        const entry = this.hand(lock, client, 'tryAcquire', options, { startFloor });
        void this.hold(entry, client, true);
      },
      (error) => {
        this.settle(call);
        this.note(client, key, `tryAcquire failed: ${errorName(error)}`);
        this.run.checker.typedError('tryAcquire', error);
        this.notRefused('tryAcquire', client, key, error);
      },
    );
  }

  private withLock(client: SimClient, key: string): void {
    const lease = this.leaseOptions(client);
    const wait = this.waitOptions(client);
    const options: AcquireOptions = { ...lease, ...this.limitOption(key), waitMs: wait.waitMs };
    if (wait.failFast) options.failFastOnStoreError = true;
    const bodyError = this.rng.chance(0.08) ? new SimBodyError('withLock body') : undefined;
    let reason: Error | undefined;
    if (wait.cancelAfter !== undefined) {
      const controller = new AbortController();
      reason = new Error('sim: the caller gave up');
      const r = reason;
      client.process.after(wait.cancelAfter, () => controller.abort(r));
      options.signal = controller.signal;
    }
    this.op('withLock', client, key, describeOptions(options));
    const call = this.pendingCall(client, 'withLock', key, wait.waitMs);
    const startFloor = this.run.checker.tokenFloor(key);
    let result: Promise<unknown>;
    try {
      result = client.client.withLock(
        key,
        async (lock) => {
          this.settle(call);
          const entry = this.hand(lock, client, 'withLock', options, { startFloor });
          await this.hold(entry, client, false);
          if (bodyError) throw bodyError;
          return entry.seq;
        },
        options,
      );
    } catch (error) {
      result = Promise.reject(error);
    }
    result.then(
      () => this.note(client, key, 'withLock done'),
      (error) => {
        this.settle(call);
        this.note(client, key, `withLock failed: ${errorName(error)}`);
        const allowed: unknown[] = bodyError ? [bodyError] : [];
        if (reason) allowed.push(reason);
        this.run.checker.typedError('withLock', error, allowed);
        this.notRefused('withLock', client, key, error);
      },
    );
  }

  /**
   * acquireAll over 2–3 keys of one limit (one options object serves every key), waiting for
   * none, a while, or ever (sometimes cancelled). Each lock the call takes is tapped as it is
   * taken and checked like any lock handed to user code, those the call gives back when it
   * fails too; what it returns, or what it leaves behind when it throws, is checked (lock-set).
   */
  private acquireAll(client: SimClient): void {
    const group = this.rng.pick(this.run.config.keyGroups);
    const pool = [...group];
    const keys: string[] = [];
    const size = this.rng.int(2, Math.min(3, group.length));
    while (keys.length < size) keys.push(pool.splice(this.rng.int(0, pool.length - 1), 1)[0]!);
    const label = keys.join('+');
    const lease = this.leaseOptions(client);
    const wait = this.waitOptions(client);
    // The call's context names it, so that the tap knows which acquisitions are its own.
    const context = `set-${++this.setSeq}`;
    const options: AcquireOptions = { ...lease, ...this.limitOption(keys[0]!), waitMs: wait.waitMs, context };
    if (wait.failFast) options.failFastOnStoreError = true;
    let reason: Error | undefined;
    if (wait.cancelAfter !== undefined) {
      const controller = new AbortController();
      reason = new Error('sim: the caller gave up');
      const r = reason;
      client.process.after(wait.cancelAfter, () => controller.abort(r));
      options.signal = controller.signal;
    }
    this.op('acquireAll', client, label, `${context} ${describeOptions(options)}`);
    // Each key may take one more claim after the wait, and the release of those taken one more.
    const call = this.pendingCall(client, 'acquireAll', label, wait.waitMs, keys.length + 1);
    const floors = new Map(keys.map((key) => [key, this.run.checker.tokenFloor(key)]));
    const taken: Lock<unknown>[] = [];
    const entries = new Map<Lock<unknown>, HandedLock>();
    client.setTaps.set(context, (lock) => {
      taken.push(lock);
      const startFloor = floors.get(lock.key);
      entries.set(
        lock,
        this.hand(lock, client, 'acquireAll', options, startFloor === undefined ? {} : { startFloor }),
      );
    });
    let attempt: Promise<LockSet<unknown>>;
    try {
      attempt = client.client.acquireAll(keys, options);
    } catch (error) {
      attempt = Promise.reject(error);
    }
    attempt.then(
      (set) => {
        client.setTaps.delete(context);
        this.settle(call);
        const tokens = set.keys.map((key) => `${key} token ${set.locks.get(key)?.fencingToken}`);
        this.note(client, label, `acquireAll ${context} holds ${tokens.join(', ')}`);
        this.run.checker.setReturned(client.id, keys, set, taken);
        void this.holdSet(set, entries, client, label);
      },
      (error) => {
        client.setTaps.delete(context);
        this.settle(call);
        this.note(client, label, `acquireAll ${context} failed: ${errorName(error)}`);
        this.run.checker.typedError('acquireAll', error, reason ? [reason] : []);
        this.notRefused('acquireAll', client, label, error);
        const releasing = this.run.checker.setThrew(client.id, keys, taken, error);
        // Their releases are retried every few seconds at most: once faults stopped, each
        // lands within the longest pause between tries plus two request timeouts.
        const deadline =
          Math.max(this.run.world.now, this.run.quietFrom) +
          RELEASE_RETRY_LONGEST_MS +
          2 * this.run.config.requestTimeoutMs +
          1000;
        for (const lock of releasing) this.run.checker.orphanEndsBy(lock, client.id, client, deadline);
      },
    );
  }

  /**
   * A call with a limit other than the key's, in a client that holds the key now: core refuses
   * it (LockConfigError) before any request, and it takes no slot (the store-side limit check
   * would see a record written with another limit).
   */
  private mismatch(client: SimClient, key: string): void {
    const held = this.run.checker
      .liveEntries()
      .some((entry) => entry.key === key && entry.client === client && entry.lock.isHeld);
    if (!held) return;
    const own = this.run.config.limits[key] ?? 1;
    const limit = this.rng.pick([1, 2, 3, 5].filter((other) => other !== own));
    const tryOnly = this.rng.chance(0.3);
    const options: AcquireOptions = { limit, waitMs: this.rng.chance(0.5) ? 0 : this.rng.real(20, 2000) };
    this.op('mismatch', client, key, tryOnly ? `tryAcquire limit=${limit}` : describeOptions(options));
    let attempt: Promise<Lock<unknown> | null>;
    try {
      attempt = tryOnly ? client.client.tryAcquire(key, { limit }) : client.client.acquire(key, options);
    } catch (error) {
      attempt = Promise.reject(error);
    }
    const call = `${tryOnly ? 'tryAcquire' : 'acquire'} of "${key}" (limit ${own}) with limit ${limit} in ${client.id}, which holds it,`;
    attempt.then(
      (lock) => {
        this.run.checker.fail(
          'limit-mismatch',
          `${call} returned ${lock ? `a lock (token ${lock.fencingToken})` : 'null'} instead of a LockConfigError`,
        );
        if (lock) void lock.release().catch(() => undefined);
      },
      (error) => {
        this.note(client, key, `mismatch refused: ${errorName(error)}`);
        this.run.checker.checks++;
        if (!(error instanceof LockConfigError)) {
          this.run.checker.fail(
            'limit-mismatch',
            `${call} rejected with ${errorName(error)}, not a LockConfigError`,
          );
        }
      },
    );
  }

  /** A call with the key's own limit is never refused for its configuration: user code never mixes limits. */
  private notRefused(kind: string, client: SimClient, key: string, error: unknown): void {
    if (!(error instanceof LockConfigError)) return;
    this.run.checker.fail(
      'limit-mismatch',
      `${kind} of "${key}" in ${client.id}, with the key's own limit, was refused: ${error.message}`,
    );
  }

  private settle(call: PendingCall): void {
    call.waiting = false;
    call.client.pending.delete(call);
  }

  private hand(
    lock: Lock<unknown>,
    client: SimClient,
    via: HandedVia,
    options: AcquireOptions,
    when: { resumeStartedAt?: number; startFloor?: number } = {},
  ): HandedLock {
    bump(this.run.stats.handedByBuild, buildName(lock));
    const entry = this.run.checker.handed(lock, client, via, {
      heartbeatMs: lockView(lock).heartbeatMs,
      lockAtLeast: options.lockAtLeastMs !== undefined,
      ...when,
    });
    this.note(
      client,
      lock.key,
      `handed ${entry.lockId} token ${lock.fencingToken} (${via})${entry.takenAwayAt !== undefined ? ' [taken away before handed]' : ''}`,
    );
    return entry;
  }

  // ---- holding ---------------------------------------------------------------------------

  /**
   * User code holding a lock: a few steps spread over the hold (fenced writes after an
   * `isHeld` check, updates, extends), then, when `ends` (not withLock, which releases
   * itself), a release of some kind, a hand-off to another client, or nothing at all.
   */
  private async hold(entry: HandedLock, client: SimClient, ends: boolean): Promise<void> {
    const { lock } = entry;
    const { holdMs, steps } = this.holdPlan(entry);
    for (let i = 0; i < steps; i++) {
      await client.sleep(holdMs / steps);
      if (!lock.isHeld) break;
      // An operator's forceRelease in the holder's own process: its locks of the key end at once.
      if (this.own.chance(0.01)) this.forceRelease(client, entry.key);
      const action = this.rng.weighted({ write: 6, update: 2, extend: 1, readHandle: 0.5 });
      if (action === 'write') {
        if (lock.isHeld) this.run.checker.resourceWrite(entry);
      } else if (action === 'readHandle') {
        // Read and kept (as if sent elsewhere): from now on the lock is handed on with a write.
        this.readHandle(entry, client);
      } else if (action === 'update') {
        await this.update(entry, client);
      } else {
        await this.extend(entry, client);
      }
    }
    if (lock.isHeld) this.run.checker.resourceWrite(entry);
    if (!ends) return;
    const end = this.rng.weighted({
      release: 6,
      releaseWithData: 2,
      releaseByHandle: 0.7,
      resume: 0.7,
      abandon: 0.2,
    });
    if (end === 'release' || end === 'releaseWithData') await this.release(entry, client, end);
    else if (end === 'releaseByHandle') this.releaseByHandle(entry, client);
    else if (end === 'resume' && this.own.chance(0.4)) this.resumeHere(entry, client);
    else if (end === 'resume') this.resumeElsewhere(entry, client);
    else this.note(client, entry.key, `abandons ${entry.lockId}`);
  }

  /** User code reads the lock's handle (to pass it elsewhere, or to keep it). */
  private readHandle(entry: HandedLock, client: SimClient): string {
    this.run.checker.handleRead(entry);
    const { handle } = entry.lock;
    this.note(client, entry.key, `reads the handle of ${entry.lockId} token ${entry.token}`);
    return handle;
  }

  /** How long to hold (short, about a heartbeat, or 1–4 leases), in how many steps. */
  private holdPlan(entry: HandedLock): { holdMs: number; steps: number } {
    const lease = entry.leaseMs > 0 ? entry.leaseMs : 5000;
    const beat = entry.heartbeatMs === false ? lease / 3 : entry.heartbeatMs;
    const span = this.rng.weighted({ short: 5, medium: 3, long: 2 });
    const holdMs =
      span === 'short'
        ? this.rng.real(0, 100)
        : span === 'medium'
          ? this.rng.real(0.2, 2) * beat
          : this.rng.real(1, 4) * lease;
    return { holdMs, steps: this.rng.int(1, 5) };
  }

  /**
   * User code holding a set from acquireAll: fenced writes with each lock's own token after
   * its `isHeld` check, now and then an update of one lock's data; then `release()` of the
   * set, its `await using` disposal, or nothing.
   */
  private async holdSet(
    set: LockSet<unknown>,
    entries: ReadonlyMap<Lock<unknown>, HandedLock>,
    client: SimClient,
    label: string,
  ): Promise<void> {
    const held = set.keys.map((key) => entries.get(set.lock(key))!);
    const { holdMs, steps } = this.holdPlan(held[0]!);
    const writeAll = () => {
      for (const entry of held) if (entry.lock.isHeld) this.run.checker.resourceWrite(entry);
    };
    for (let i = 0; i < steps; i++) {
      await client.sleep(holdMs / steps);
      if (!set.isHeld) break;
      if (this.rng.weighted({ write: 6, update: 1 }) === 'write') writeAll();
      else await this.update(this.rng.pick(held), client);
    }
    writeAll();
    const end = this.rng.weighted({ release: 6, dispose: 2, abandon: 0.2 });
    if (end === 'abandon') {
      this.note(client, label, 'abandons the set');
      return;
    }
    this.op(end === 'release' ? 'releaseSet' : 'disposeSet', client, label);
    try {
      await (end === 'release' ? set.release() : set[Symbol.asyncDispose]());
      this.note(client, label, 'set released');
    } catch (error) {
      this.note(client, label, `set release failed: ${errorName(error)}`);
      this.run.checker.typedError(end === 'release' ? 'set.release' : 'set disposal', error);
    }
  }

  private async update(entry: HandedLock, client: SimClient): Promise<void> {
    const w = ++this.dataSeq;
    this.op('update', client, entry.key, `w=${w} by ${entry.lockId}`);
    try {
      await entry.lock.update({ w });
      this.dataSettled(entry, client, w, 'stored', 'update');
    } catch (error) {
      this.run.checker.typedError('update', error);
      this.dataSettled(entry, client, w, dataOutcomeOf(error), 'update', error);
    }
  }

  private async extend(entry: HandedLock, client: SimClient): Promise<void> {
    const lease = entry.leaseMs > 0 ? entry.leaseMs : client.config.leaseMs;
    const drawn = this.rng.chance(0.5) ? this.rng.real(1, 3) * lease : this.rng.real(0.3, 0.95) * lease;
    const ms = Math.max(MIN_LEASE_MS, drawn); // a shorter lease is refused before any request
    this.op('extend', client, entry.key, `${Math.round(ms)} ms by ${entry.lockId}`);
    try {
      // Recorded before the write: from the moment it is sent, the store may hold the longer lease.
      this.run.checker.extended(entry, ms);
      await entry.lock.extend(ms);
    } catch (error) {
      this.note(client, entry.key, `extend failed: ${errorName(error)}`);
      this.run.checker.typedError('extend', error);
    }
  }

  private async release(entry: HandedLock, client: SimClient, how: string): Promise<void> {
    const w = how === 'releaseWithData' ? ++this.dataSeq : undefined;
    this.op('release', client, entry.key, `${entry.lockId}${w ? ` w=${w}` : ''}`);
    try {
      await (w === undefined ? entry.lock.release() : entry.lock.release({ data: { w } }));
      this.note(client, entry.key, `released ${entry.lockId}`);
      if (w !== undefined) this.dataSettled(entry, client, w, 'stored', 'release');
      // Now and then the handle is read after the release (it may have been passed on with no
      // write): another process must find it ended.
      if (!entry.lockAtLeast && this.rng.chance(0.1)) this.staleHandle(entry, client);
    } catch (error) {
      this.note(client, entry.key, `release failed: ${errorName(error)}`);
      this.run.checker.typedError('release', error);
      if (w !== undefined) {
        // A release that failed on a store error is retried in the background (documented):
        // its data may still land.
        const outcome = error instanceof LockStoreError ? 'unknown' : dataOutcomeOf(error);
        this.dataSettled(entry, client, w, outcome, 'release', error);
      }
    }
  }

  private otherClient(client: SimClient): SimClient | undefined {
    const others = this.run.clients.filter((c) => c.usable && c.slot !== client.slot);
    return others.length === 0 ? undefined : this.rng.pick(others);
  }

  /** Another process releases the lock by its handle (the acquire-here, release-there pattern). */
  private releaseByHandle(entry: HandedLock, client: SimClient): void {
    const other = this.otherClient(client);
    if (!other) return;
    const w = this.rng.chance(0.3) ? ++this.dataSeq : undefined;
    const handle = this.readHandle(entry, client);
    const { key } = entry.lock;
    other.process.after(this.rng.real(0, 200), () => {
      if (!other.usable) return;
      this.op('releaseByHandle', other, key, `${entry.lockId}${w ? ` w=${w}` : ''}`);
      let done: Promise<void>;
      try {
        done = other.client.release(key, handle, w === undefined ? {} : { data: { w } });
      } catch (error) {
        done = Promise.reject(error);
      }
      done.then(
        () => {
          this.note(other, key, `released ${entry.lockId} by handle`);
          if (w !== undefined) this.dataSettled(entry, other, w, 'stored', 'release by handle');
        },
        (error) => {
          this.note(other, key, `release by handle failed: ${errorName(error)}`);
          this.run.checker.typedError('release by handle', error);
          if (w !== undefined)
            this.dataSettled(entry, other, w, dataOutcomeOf(error), 'release by handle', error);
        },
      );
    });
  }

  /** Another process takes the lock over by its handle and holds it from then on. */
  private resumeElsewhere(entry: HandedLock, client: SimClient): void {
    const other = this.otherClient(client);
    if (!other) return;
    const handle = this.readHandle(entry, client);
    const { key } = entry.lock;
    other.process.after(this.rng.real(0, 200), () => {
      if (!other.usable) return;
      this.op('resume', other, key, entry.lockId);
      const startedAt = this.run.world.now;
      let resumed: Promise<Lock<unknown>>;
      try {
        resumed = other.client.resume(handle, this.rng.chance(0.2) ? { heartbeatMs: false } : {});
      } catch (error) {
        resumed = Promise.reject(error);
      }
      resumed.then(
        (lock) => {
          const handed = this.hand(lock, other, 'resume', {}, { resumeStartedAt: startedAt });
          void this.hold(handed, other, true);
        },
        (error) => {
          this.note(other, key, `resume failed: ${errorName(error)}`);
          this.run.checker.typedError('resume', error);
        },
      );
    });
  }

  /**
   * User code resumes, in the client that holds it, the lock whose handle it has (the job that
   * resumes ran in the same process): core must not make a second Lock of that acquisition. It
   * returns the same Lock, which this user code holds on; anything else is a second Lock, and
   * the exclusion check judges it. Now and then two resumes of the handle race.
   */
  private resumeHere(entry: HandedLock, client: SimClient): void {
    const handle = this.readHandle(entry, client);
    const { key } = entry.lock;
    const twice = this.own.chance(0.25);
    // The Locks these resumes returned (racing ones return one Lock, handed to user code once).
    const got = new Set<Lock<unknown>>([entry.lock]);
    client.process.after(this.own.real(0, 50), () => {
      if (!client.usable) return;
      for (let n = twice ? 2 : 1; n > 0; n--) {
        this.op('resumeHere', client, key, entry.lockId);
        const startedAt = this.run.world.now;
        let resumed: Promise<Lock<unknown>>;
        try {
          resumed = client.client.resume(handle);
        } catch (error) {
          resumed = Promise.reject(error);
        }
        resumed.then(
          (lock) => {
            this.run.checker.checks++;
            if (lock === entry.lock) {
              this.note(client, key, `resume here: the same Lock ${entry.lockId}`);
              if (n === 1) void this.hold(entry, client, true);
              return;
            }
            if (got.has(lock)) {
              this.note(client, key, 'resume here: the Lock the racing resume returned');
              return;
            }
            got.add(lock);
            const handed = this.hand(lock, client, 'resume', {}, { resumeStartedAt: startedAt });
            void this.hold(handed, client, true);
          },
          (error) => {
            this.note(client, key, `resume here failed: ${errorName(error)}`);
            this.run.checker.typedError('resume', error);
          },
        );
      }
    });
  }

  /**
   * The handle of a lock released successfully (with a write, or passed on with none), used by
   * another process to release or resume it: core must refuse, as the acquisition it names
   * ended (released, handed over, or passed on: a handle read after a local pass says so).
   */
  private staleHandle(entry: HandedLock, client: SimClient): void {
    const other = this.otherClient(client);
    if (!other) return;
    const { handle, key } = entry.lock;
    const resume = this.rng.chance(0.5);
    other.process.after(this.rng.real(0, 50), () => {
      if (!other.usable) return;
      this.op(resume ? 'staleResume' : 'staleRelease', other, key, `${entry.lockId} token ${entry.token}`);
      let done: Promise<unknown>;
      try {
        done = resume ? other.client.resume(handle) : other.client.release(key, handle);
      } catch (error) {
        done = Promise.reject(error);
      }
      done.then(
        (lock) => {
          if (lock) (lock as Lock<unknown>).release().catch(() => undefined);
          this.run.checker.fail(
            'handle',
            `${other.id} ${resume ? 'resumed' : 'released'} "${key}" by the handle of ${entry.lockId} token ${entry.token}, read after that lock's release had returned: the acquisition it names had ended`,
          );
        },
        (error) => {
          this.note(other, key, `stale handle refused: ${errorName(error)}`);
          this.run.checker.typedError(resume ? 'resume' : 'release by handle', error);
        },
      );
    });
  }

  private dataSettled(
    entry: HandedLock,
    client: SimClient,
    w: number,
    outcome: DataOutcome,
    how: string,
    error?: unknown,
  ): void {
    this.note(client, entry.key, `${how} w=${w}: ${outcome}${error ? ` (${errorName(error)})` : ''}`);
    this.run.checker.dataSettled(entry.key, w, outcome, how);
  }

  // ---- operator and leader election ------------------------------------------------------

  private forceRelease(client: SimClient, key: string): void {
    this.op('forceRelease', client, key);
    const forcing = this.run.checker.forceReleaseBegan(client.process.id, key);
    let done: Promise<boolean>;
    try {
      done = client.client.forceRelease(key);
    } catch (error) {
      done = Promise.reject(error);
    }
    done.then(
      (freed) => {
        this.note(client, key, `forceRelease: ${freed ? 'freed' : 'was free'}`);
        this.run.checker.forceReleaseSettled(forcing);
      },
      (error) => {
        this.note(client, key, `forceRelease failed: ${errorName(error)}`);
        this.run.checker.typedError('forceRelease', error);
        this.run.checker.forceReleaseSettled(forcing);
      },
    );
  }

  /**
   * Now and then, right after a claim of `key` was started in `client`, an operator's
   * forceRelease of that key in the same client, while the claim is on its way.
   */
  private maybeForceWhileClaiming(client: SimClient, key: string): void {
    if (!this.own.chance(0.03)) return;
    client.process.after(this.own.real(0, 40), () => {
      if (client.usable) this.forceRelease(client, key);
    });
  }

  private campaign(client: SimClient, key: string): void {
    const lease = this.leaseOptions(client);
    const electedError = new SimBodyError('onElected');
    this.op('campaign', client, key, describeOptions(lease));
    const campaign: Campaign = client.client.campaign(key, {
      ...(lease.leaseMs === undefined ? {} : { leaseMs: lease.leaseMs }),
      ...(lease.heartbeatMs === undefined ? {} : { heartbeatMs: lease.heartbeatMs }),
      onElected: (lock) => {
        client.terms.set(campaign, lock);
        const entry = this.hand(lock, client, 'campaign', {});
        if (lock.isHeld) this.run.checker.resourceWrite(entry);
        if (this.rng.chance(0.05)) {
          // The campaign resigns this term itself (releases, then onDemoted): from here on
          // close() does not end it.
          client.resigningTerms.add(lock);
          throw electedError;
        }
        void this.lead(entry, client);
        this.maybeCloseWhileLeading(client, campaign, lock);
      },
      onDemoted: () => {
        client.terms.delete(campaign);
      },
      onError: (error) => this.run.checker.typedError('campaign (onError)', error, [electedError]),
    });
    client.campaigns.add(campaign);
    campaign.done.then(
      () => client.campaigns.delete(campaign),
      (error) => {
        client.campaigns.delete(campaign);
        this.run.checker.typedError('campaign', error);
      },
    );
    const lease2 = client.config.leaseMs;
    client.process.after(this.rng.real(lease2, 20 * lease2), () => this.stopCampaign(client, key, campaign));
  }

  /**
   * Now and then a replica shuts down while it leads: its client's close() must end the term
   * (the term's signal aborts, onDemoted runs, the campaign's `done` settles; see run-seed's
   * close checks).
   */
  private maybeCloseWhileLeading(client: SimClient, campaign: Campaign, lock: Lock<unknown>): void {
    if (!this.leaderCloses.chance(0.15)) return;
    const within = client.config.leaseMs;
    client.process.after(this.leaderCloses.real(0, within), () => {
      if (!client.usable || client.terms.get(campaign) !== lock || !lock.isHeld) return;
      this.op('closeWhileLeading', client, lock.key);
      this.run.closeClient(client);
    });
  }

  /** A leader's term: fenced writes while it leads. */
  private async lead(entry: HandedLock, client: SimClient): Promise<void> {
    const beat = entry.heartbeatMs === false ? client.config.leaseMs / 3 : entry.heartbeatMs;
    while (entry.lock.isHeld) {
      await client.sleep(this.rng.real(0.2, 1.5) * beat);
      if (entry.lock.isHeld) this.run.checker.resourceWrite(entry);
    }
  }

  stopCampaign(client: SimClient, key: string, campaign: Campaign): void {
    if (!client.campaigns.has(campaign) || client.process.crashed) return;
    this.op('campaignStop', client, key);
    client.stoppedCampaigns.add(campaign);
    campaign.stop().then(
      () => this.note(client, key, 'campaign stopped'),
      (error) => this.run.checker.typedError('campaign.stop', error),
    );
  }

  /** Every campaign of every live client stops (the quiet phase begins). */
  stopAllCampaigns(): void {
    for (const client of this.run.clients) {
      if (!client.usable) continue;
      for (const campaign of [...client.campaigns]) {
        client.process.after(0, () => this.stopCampaign(client, 'all', campaign));
      }
    }
  }

  /** Graceful shutdown of a client (an op like any other). */
  close(client: SimClient): Promise<void> {
    this.op('close', client, '-');
    client.state = 'closing';
    client.closeCalledAt = this.run.world.now;
    for (const [campaign, lock] of client.terms)
      if (!client.stoppedCampaigns.has(campaign) && !client.resigningTerms.has(lock))
        client.termsAtClose.push(lock);
    let closing: Promise<void>;
    try {
      closing = client.client.close();
    } catch (error) {
      closing = Promise.reject(error);
    }
    return closing.then(
      () => {
        client.closeSettled = true;
        if (client.state === 'closing') client.state = 'closed';
        this.note(client, '-', 'closed');
      },
      (error) => {
        client.closeSettled = true;
        if (client.state === 'closing') client.state = 'closed';
        this.run.checker.typedError('close', error);
      },
    );
  }
}

/** Core's longest pause between two tries of a release that failed (client/lock.ts). */
const RELEASE_RETRY_LONGEST_MS = 5000;

function describeOptions(options: AcquireOptions): string {
  const parts: string[] = [];
  if (options.waitMs !== undefined) parts.push(`wait=${fmt(options.waitMs)}`);
  if (options.leaseMs !== undefined) parts.push(`lease=${fmt(options.leaseMs)}`);
  if (options.heartbeatMs !== undefined) parts.push(`hb=${fmt(options.heartbeatMs)}`);
  if (options.lockAtLeastMs !== undefined) parts.push(`atLeast=${fmt(options.lockAtLeastMs)}`);
  if (options.limit !== undefined) parts.push(`limit=${options.limit}`);
  if (options.signal) parts.push('cancellable');
  if (options.failFastOnStoreError) parts.push('failFast');
  return parts.join(' ');
}

function fmt(value: number | false): string {
  return value === false ? 'off' : Number.isFinite(value) ? String(Math.round(value)) : 'inf';
}

export function errorName(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: string }).code;
    const maybe = (error as { maybeApplied?: boolean }).maybeApplied ? ' maybeApplied' : '';
    return `${error.name}${code ? `(${code})` : ''}${maybe}: ${error.message.slice(0, 120)}`;
  }
  return String(error);
}
