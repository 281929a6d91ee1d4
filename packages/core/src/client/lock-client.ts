// Longer than ~300 lines on purpose: LockClient is the public API in one class (acquire,
// tryAcquire, withLock, acquireAll, inspect, list, release, resume, forceRelease, campaign, close) with its
// documentation. Each method checks its input and delegates: waiting to the key's KeyQueue,
// keeping and giving back a lease to its StoreLease, the rest of the protocol to the engine.
import type { LockRecord } from '../contract/lock-record.js';
import { holdersOf } from '../engine/cas/slot-records.js';
import type { LeaseEngine } from '../engine/lease-engine.js';
import type { StoreLease } from '../engine/store-lease.js';
import {
  type HolderSummary,
  LockConfigError,
  LockLimitMismatchError,
  LockLostError,
  LockNotHeldError,
  LockStoreError,
  LockTimeoutError,
  passedOnError,
} from '../shared/errors.js';
import {
  type LockEvent,
  type LockEventListener,
  type LockEventReport,
  reportEvent,
} from '../shared/lock-events.js';
import { checkOptionKeys } from '../shared/option-keys.js';
import { backoffMs } from '../shared/retry.js';
import type { Scheduler } from '../shared/scheduler.js';
import { sleep } from '../shared/sleep.js';
import {
  checkDuration,
  checkKeyPrefix,
  checkKeyShape,
  checkSignal,
  checkWait,
  describe,
} from '../shared/validation.js';
import type { LockTelemetry } from '../telemetry/lock-telemetry.js';
import { KeyQueue } from '../waiting/key-queue.js';
import type { LockStart, QueueHost } from '../waiting/queue-host.js';
import { type AcquireRequest, prepareAcquire } from './acquire-request.js';
import {
  CAMPAIGN_OPTION_KEYS,
  type Campaign,
  type Campaigner,
  type CampaignOptions,
  startCampaign,
} from './campaign.js';
import { setUpClient } from './client-setup.js';
import { ForceReleases } from './force-releases.js';
import { decodeHandle, type HandleFields } from './handle.js';
import { keepingProcessAlive } from './keep-alive.js';
import {
  checkReleaseOptions,
  Lock,
  type LockHost,
  type LockSettings,
  type ReleaseOptions,
  storedLease,
} from './lock.js';
import { describeRecord, type LockInfo } from './lock-info.js';
import {
  ACQUIRE_OPTION_KEYS,
  type AcquireOptions,
  LIST_OPTION_KEYS,
  type ListOptions,
  type LockClientOptions,
  NOT_FOR_TRY_ACQUIRE,
  RESUME_OPTION_KEYS,
  type ResolvedClientSettings,
  type ResumeOptions,
  resolveHeartbeat,
  TRY_ACQUIRE_OPTION_KEYS,
  type TryAcquireOptions,
} from './lock-options.js';
import { acquireAllKeys, type LockSet, orderedKeys, type SetAcquirer } from './lock-set.js';

/**
 * The entry point: acquire, tryAcquire, withLock, inspect, release/resume by handle,
 * forceRelease and campaign (leader election). One client per process and store is enough;
 * waiters for one key inside it share one poller and get the lock handed over directly, for a
 * turn of `localTurnMs` at a time so that other processes get it too.
 */
export class LockClient implements LockHost {
  /** @internal How leases are claimed, renewed and released on this client's store. */
  readonly engine: LeaseEngine;
  readonly owner: string;
  readonly settings: ResolvedClientSettings;
  /** The queue of each key this client holds or waits for. */
  private readonly keys = new Map<string, KeyQueue<Lock<unknown>, LockSettings>>();
  private readonly queueHost: QueueHost<Lock<unknown>, LockSettings>;
  private readonly onEvent: LockEventListener | undefined;
  private readonly telemetry: LockTelemetry | undefined;
  /** Store work this client started and nobody awaits any more (pollers, late releases): close() waits for it. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** This client's forceReleases on their way, and its requests that may win a key meanwhile. */
  private readonly forceReleases = new ForceReleases();
  /** The last resume of each acquisition (by lock id) in this client: the next one waits for it. */
  private readonly resuming = new Map<string, Promise<unknown>>();
  /** Every store lease of this client not ended yet: close() waits (a while) for their ends. */
  private readonly leases = new Set<StoreLease>();
  /** The losses a forceRelease in this client caused (a resume of such a lock says so). */
  private readonly forcedHere = new WeakSet<LockLostError>();
  /** The forceReleases of each key on their way here, each with the leases made since it began. */
  private readonly forcing = new Map<string, Set<Set<{ end(): void }>>>();
  private closing: Promise<void> | undefined;
  /** Aborts (reason: the closed client's error) as close() begins, before it releases anything. */
  private readonly closeStarted = new AbortController();
  /** Clocks, timers and randomness of this client (the system's unless `clock.time` brings others). */
  private get time(): Scheduler {
    return this.engine.clock.time;
  }

  /** How often a lock nothing renews reads its record to learn it was taken away. */
  private get verifyMs(): number {
    return VERIFY_POLLS * this.settings.pollMs;
  }

  constructor(options: LockClientOptions) {
    const setup = setUpClient(options, (event) => this.report(event));
    this.engine = setup.engine;
    this.owner = setup.owner;
    this.settings = setup.settings;
    this.onEvent = setup.onEvent;
    this.telemetry = setup.telemetry;
    this.queueHost = this.makeQueueHost();
  }

  /** Acquires `key`, waiting up to `waitMs` (default: until acquired or `signal` aborts). */
  async acquire<T = unknown>(key: string, options: AcquireOptions = {}): Promise<Lock<T>> {
    checkOptionKeys('acquire()', options, ACQUIRE_OPTION_KEYS);
    const request = this.prepare(key, options);
    this.throwIfClosed();
    const waitMs = checkWait('waitMs', options.waitMs ?? Number.POSITIVE_INFINITY);
    return this.recordAttempt(key, request, () => this.acquirePrepared<T>(key, request, waitMs, options));
  }

  private async acquirePrepared<T>(
    key: string,
    request: AcquireRequest,
    waitMs: number,
    options: AcquireOptions,
  ): Promise<Lock<T>> {
    if (waitMs === 0 || options.failFastOnStoreError === true) {
      // One try outside the waiting loop, so that a store error reaches the caller.
      const attempt = await this.track(this.tryOnce(key, request));
      if (attempt.lock) return attempt.lock as Lock<T>;
      if (waitMs === 0) {
        this.report({ type: 'contended', key, reason: 'timeout', holder: attempt.holder });
        const limit = request.limit > 1 ? request.limit : undefined;
        throw new LockTimeoutError(key, 0, attempt.holder, { limit });
      }
    }
    return (await this.wait(key, request, waitMs, request.signal)) as Lock<T>;
  }

  /** One attempt, never waits: the lock, or null when it is held. */
  async tryAcquire<T = unknown>(key: string, options: TryAcquireOptions = {}): Promise<Lock<T> | null> {
    checkOptionKeys('tryAcquire()', options, TRY_ACQUIRE_OPTION_KEYS, NOT_FOR_TRY_ACQUIRE);
    const request = this.prepare(key, options);
    this.throwIfClosed();
    return this.recordAttempt(key, request, async () => {
      const attempt = await this.track(this.tryOnce(key, request));
      if (attempt.lock) return attempt.lock as Lock<T>;
      this.report({ type: 'contended', key, reason: 'busy', holder: attempt.holder });
      return null;
    });
  }

  /** Runs one acquire call, recording its span and metrics when telemetry is on. */
  private recordAttempt<L extends Lock<unknown> | null>(
    key: string,
    request: AcquireRequest,
    run: () => Promise<L>,
  ): Promise<L> {
    const attempt = this.telemetry?.attempt(key, request.attributes, request.limit);
    if (!attempt) return run().then((lock) => this.unlessClosed(lock));
    return run()
      .then((lock) => this.unlessClosed(lock))
      .then(
        (lock) => {
          if (lock) attempt.acquired(lock);
          else attempt.busy();
          return lock;
        },
        (error: unknown) => {
          attempt.failed(error, request.signal);
          throw error;
        },
      );
  }

  /**
   * A lock won once close() began (its try was on its way) is not handed out: close() gives it
   * back, and the caller hears the client closed, as a caller still waiting does.
   */
  private unlessClosed<L extends Lock<unknown> | null>(lock: L): L {
    if (!lock || !this.closed) return lock;
    void this.track(lock.releaseUnused().catch(() => undefined));
    throw closedError();
  }

  /**
   * Acquires `key`, runs `fn(lock)`, and always releases. If the lease was lost while `fn`
   * ran, throws the LockLostError even when `fn` succeeded: its work was not exclusive.
   */
  async withLock<R, T = unknown>(
    key: string,
    fn: (lock: Lock<T>) => R | Promise<R>,
    options: AcquireOptions = {},
  ): Promise<R> {
    if (typeof fn !== 'function')
      throw new LockConfigError(`withLock(key, fn) needs a function, got ${describe(fn)}.`);
    checkOptionKeys('withLock()', options, ACQUIRE_OPTION_KEYS);
    const lock = await this.acquire<T>(key, options);
    let result: R;
    try {
      result = await fn(lock);
    } catch (error) {
      await lock.release().catch(() => undefined);
      throw error;
    }
    await lock.release();
    return result;
  }

  /**
   * Acquires every key of `keys` or none: within one `waitMs` for all, in one global order (so
   * that two calls with overlapping keys cannot deadlock), releasing those taken when another
   * cannot be. The options apply to each lock (`limit` too). Each lock keeps its own fencing
   * token; the set's `signal` aborts when any of them is lost.
   */
  async acquireAll<T = unknown>(keys: readonly string[], options: AcquireOptions = {}): Promise<LockSet<T>> {
    checkOptionKeys('acquireAll()', options, ACQUIRE_OPTION_KEYS);
    const ordered = orderedKeys(keys);
    // Every key and option is checked before the first request.
    for (const key of ordered) this.prepare(key, options);
    checkWait('waitMs', options.waitMs ?? Number.POSITIVE_INFINITY);
    this.throwIfClosed();
    const acquirer: SetAcquirer = {
      acquire: (key, keyOptions) => this.acquire(key, keyOptions),
      time: this.time,
    };
    return acquireAllKeys<T>(acquirer, ordered, options);
  }

  /**
   * Checks acquire options as `acquire` would, against this client and its store, without
   * sending anything: for adapters that set a lock up before its first use, so a mistake
   * (a bad `limit`, or one the store cannot keep) fails at start-up, not on the first request.
   */
  checkAcquireOptions(options: AcquireOptions): void {
    checkOptionKeys('acquire()', options, ACQUIRE_OPTION_KEYS);
    prepareAcquire(options, this.engine, this.settings, this.verifyMs);
  }

  /** Who holds `key`, since when, with what context and token — or that it is free. */
  async inspect<T = unknown>(key: string): Promise<LockInfo<T>> {
    this.checkKey(key);
    const current = await this.engine.read(key);
    return describeRecord(key, current, this.time.now()) as LockInfo<T>;
  }

  /**
   * Every lock whose key starts with `prefix` (all of them when omitted), each as `inspect`
   * reports it. Memory, S3 and the S3 list strategy list in key order (by UTF-8 bytes), DynamoDB
   * in no particular order. A record that cannot be read is left out and reported as an
   * `unreadable` event. A bad prefix, or a store that cannot list, throws LockConfigError here,
   * before any request.
   */
  list<T = unknown>(prefix?: string, options: ListOptions = {}): AsyncIterable<LockInfo<T>> {
    if (typeof options !== 'object' || options === null)
      throw new LockConfigError(`list() options must be an object, got ${describe(options)}.`);
    checkOptionKeys('list()', options, LIST_OPTION_KEYS);
    const keyPrefix = checkKeyPrefix('list()', prefix);
    // A prefix longer than any key the store takes matches none: refused as such a key would be.
    if (keyPrefix !== '') this.engine.checkKey(keyPrefix);
    const signal = checkSignal('signal', options.signal);
    this.engine.checkList();
    return this.listed<T>(keyPrefix, signal);
  }

  private async *listed<T>(prefix: string, signal: AbortSignal | undefined): AsyncGenerator<LockInfo<T>> {
    signal?.throwIfAborted();
    for await (const found of this.engine.list(prefix, signal)) {
      signal?.throwIfAborted();
      if (found.error) this.report({ type: 'unreadable', key: found.key, error: found.error });
      else yield describeRecord(found.key, found.current, this.time.now()) as LockInfo<T>;
    }
  }

  /**
   * Releases the acquisition named by `handle` (from `lock.handle`, possibly in another process):
   * takes it over, then releases it. When the store fails the release after the takeover, this
   * rejects and the lock is given back in the background, without the data.
   */
  async release(key: string, handle: string, options: ReleaseOptions = {}): Promise<void> {
    checkReleaseOptions('release(key, handle, options)', options);
    this.checkKey(key);
    const fields = decodeHandle(handle);
    if (fields.key !== key)
      throw new LockConfigError(`This handle is for lock "${fields.key}", not "${key}".`);
    const data = 'data' in options ? { value: options.data } : undefined;
    if (data) this.engine.checkData(data.value);
    if (fields.passedOn) throw passedOnError(key);
    const local = this.keys.get(key)?.holding(fields.lockId);
    if (local && local.fencingToken === fields.fencingToken) {
      if (data) this.checkData(data.value, local.lease.record);
      await local.release(data ? { data: data.value } : {});
      return;
    }
    if (local) throw passedOnError(key); // a later caller here holds it now
    await this.engine.releaseByHandle(key, fields.lockId, fields.fencingToken, data);
  }

  /**
   * Takes over the acquisition named by `handle` in this client, renewing it from now on (its
   * holder elsewhere learns at its next renewal that it lost it). In the client that holds it
   * already, returns that same Lock once a renewal confirms it still holds it: one acquisition
   * is never two Locks here. That Lock keeps its own settings (`heartbeatMs` is not changed);
   * `onLost` is called too when it is lost. Throws LockNotHeldError when the acquisition ended
   * (released, passed on, taken over), or is being released in this client.
   */
  async resume<T = unknown>(handle: string, options: ResumeOptions = {}): Promise<Lock<T>> {
    if (typeof options !== 'object' || options === null)
      throw new LockConfigError(`resume() options must be an object, got ${describe(options)}.`);
    checkOptionKeys('resume()', options, RESUME_OPTION_KEYS);
    const fields = decodeHandle(handle);
    this.checkKey(fields.key);
    this.engine.checkResume();
    if (options.heartbeatMs !== undefined && options.heartbeatMs !== false) {
      checkDuration('heartbeatMs', options.heartbeatMs); // the rest of the check needs the record's lease
    }
    this.throwIfClosed();
    // One resume of an acquisition at a time: the next one then finds the Lock it made (two
    // racing would each renew, and the second renewal takes the lease from under the first Lock).
    const before = this.resuming.get(fields.lockId);
    const resumed = before
      ? before.catch(() => undefined).then(() => this.resumeNow(fields, options))
      : this.resumeNow(fields, options);
    this.resuming.set(fields.lockId, resumed);
    const forget = () => {
      if (this.resuming.get(fields.lockId) === resumed) this.resuming.delete(fields.lockId);
    };
    resumed.then(forget, forget);
    // Tracked like a claim, so that close() waits for it and releases the lock it adopts.
    return (await this.track(resumed)) as Lock<T>;
  }

  private async resumeNow(fields: HandleFields, options: ResumeOptions): Promise<Lock<unknown>> {
    if (fields.passedOn) throw passedOnError(fields.key);
    const local = this.keys.get(fields.key)?.holding(fields.lockId);
    const same = local && (await this.resumeHeld(local, fields, options));
    if (same) return same;
    const { key } = fields;
    const resumed = await this.engine.resume(
      key,
      fields.lockId,
      fields.fencingToken,
      (leaseMs, limit) => {
        // Before the renewal: a lease this client could not keep beside its own holders is left as it is.
        const queue = this.keys.get(key);
        if (queue) checkLocalLimit(queue, limit);
        const heartbeatMs = resolveHeartbeat(
          options.heartbeatMs ?? this.settings.heartbeatMs,
          leaseMs,
          'heartbeatMs',
        );
        return { heartbeatMs, verifyMs: this.verifyMs };
      },
      (lease) => this.adopt(lease),
    );
    const { lease, token, leaseMs, limit } = resumed;
    const settings: LockSettings = {
      leaseMs,
      heartbeatMs: resolveHeartbeat(options.heartbeatMs ?? this.settings.heartbeatMs, leaseMs, 'heartbeatMs'),
      onLost: options.onLost,
      verifyMs: this.verifyMs,
      context: resumed.context,
    };
    const start = { token, acquiredAt: resumed.acquiredAt, context: resumed.context, owner: this.owner };
    const lock = this.holdWon(key, limit, lease, settings, start);
    lock.shareHandle(); // its handle is known elsewhere: never passed on without a write
    return lock;
  }

  /**
   * A resume of an acquisition this client holds: the Lock it has, once a renewal confirms that
   * it still holds it. Undefined when that Lock was taken over elsewhere (a resume in another
   * process): it is lost now, and this resume takes the acquisition over as any other would.
   */
  private async resumeHeld(
    local: Lock<unknown>,
    fields: HandleFields,
    options: ResumeOptions,
  ): Promise<Lock<unknown> | undefined> {
    // A later local holder on the same lease (passed on with no write) is not the handle's.
    if (local.fencingToken !== fields.fencingToken) throw passedOnError(fields.key);
    if (!local.isHeld) throw new LockNotHeldError(fields.key, 'it is being released in this client');
    try {
      await local.renewNow();
    } catch (error) {
      if (!(error instanceof LockLostError) || local.isHeld) throw error;
      // Lost here meanwhile (a forceRelease in this client, the lease running out): that loss is
      // this resume's answer. Taken over elsewhere (the renewal found the record moved on): this
      // resume takes the acquisition over as any other would.
      const { reason } = local.signal;
      if (reason instanceof LockLostError && (this.forcedHere.has(reason) || reason.reason === 'expired')) {
        throw reason;
      }
      return undefined;
    }
    // Lost while the renewal was on its way (a forceRelease here, the lease running out): the
    // renewal then ends without an error, and this resume must not hand out the lost Lock.
    if (!local.isHeld) {
      const { reason } = local.signal;
      throw reason instanceof LockLostError
        ? reason
        : new LockNotHeldError(fields.key, 'it was given up in this client while being resumed');
    }
    if (options.onLost) watchLoss(local.signal, options.onLost);
    return local;
  }

  /**
   * Frees `key` whoever holds it (an operator's tool). The token is kept; a current holder's
   * renewal then fails and its signal aborts. This client's own locks of the key end at once,
   * before the request is sent, whatever its outcome; when it fails (it may not have freed the
   * key), their leases are given back in the background. A claim or resume of this client
   * answered after it began gives no lock: its lease is given back.
   */
  async forceRelease(key: string): Promise<boolean> {
    this.checkKey(key);
    const done = this.forceReleases.begin(key);
    const queue = this.keys.get(key);
    const ended = [...(queue?.holders ?? [])];
    // Ended now, not at the answer: the free record may land any moment, and none of them may
    // pass the key on to another caller meanwhile.
    for (const holder of ended) {
      const lost = new LockLostError(key, 'a forceRelease in this client freed it');
      this.forcedHere.add(lost);
      holder.markLost(lost);
    }
    // Every lease of the key here (held, a waiter's try on its way, or one made before the force
    // is answered) trusts nothing written meanwhile: what it wins may have been freed by the force.
    const forcing = [...this.leases]
      .filter((lease) => lease.key === key)
      .map((lease) => lease.forceReleasing());
    const during = new Set<{ end(): void }>();
    const set = this.forcing.get(key) ?? new Set();
    this.forcing.set(key, set);
    set.add(during);
    try {
      return (await this.engine.forceRelease(key)) !== null;
    } catch (error) {
      // It may not have freed the key: the leases of the locks it ended are given back.
      for (const holder of ended) this.giveBackByHandle(key, holder.lease.lockId, holder.fencingToken);
      throw error;
    } finally {
      set.delete(during);
      if (set.size === 0) this.forcing.delete(key);
      for (const force of forcing) force.end();
      for (const force of during) force.end();
      done();
      this.keys.get(key)?.wake(); // its poller waited for this answer
    }
  }

  /**
   * Releases the acquisition `lockId` (the lease of a lock this client ended) in the background,
   * as a release by its handle would, until the store answers: nothing is left to do when it is
   * no longer in the record. Nobody else gives such a lease back (a fail-closed one never runs
   * out), so a store failure is reported as 'unsettled' and tried again, even after close():
   * close() waits for it only as many tries as it gives a release of its own.
   */
  private giveBackByHandle(key: string, lockId: string, token: number): void {
    let closeMayGoOn!: () => void;
    void this.track(new Promise<void>((resolve) => (closeMayGoOn = resolve)));
    void this.giveBack(key, lockId, token, closeMayGoOn).finally(closeMayGoOn);
  }

  private async giveBack(
    key: string,
    lockId: string,
    token: number,
    closeMayGoOn: () => void,
  ): Promise<void> {
    let triesAfterClose = 0;
    for (let failures = 0; ; failures++) {
      try {
        await this.engine.releaseByHandle(key, lockId, token);
        return;
      } catch (error) {
        if (error instanceof LockNotHeldError) return;
        const lastForClose = this.closed && triesAfterClose++ === this.engine.retry.attempts;
        if (failures === 0 || lastForClose) this.report({ type: 'unsettled', key, error });
        if (lastForClose) closeMayGoOn();
      }
      const pause = backoffMs(this.engine.retry, failures, this.time.random);
      // close() cuts a pause short: its own tries follow at once. Its pauses never keep the
      // process alive.
      await sleep(this.time, pause, this.closed ? undefined : this.closeStarted.signal).catch(
        () => undefined,
      );
    }
  }

  /**
   * Leader election: campaigns for `key` until stopped, runs `onElected(lock)` at the start of
   * each term, campaigns again after a loss, and resigns (releases) on stop.
   */
  campaign<T = unknown>(key: string, options: CampaignOptions<T>): Campaign {
    checkOptionKeys('campaign()', options, CAMPAIGN_OPTION_KEYS);
    this.checkKey(key);
    if (typeof options?.onElected !== 'function') {
      throw new LockConfigError('campaign(key, { onElected }) needs an onElected function.');
    }
    checkSignal('signal', options.signal);
    this.prepare(key, {
      leaseMs: options.leaseMs,
      heartbeatMs: options.heartbeatMs,
      context: options.context,
    });
    const campaigner: Campaigner = {
      acquire: (campaignKey, acquireOptions) => this.acquire(campaignKey, acquireOptions),
      closing: this.closeStarted.signal,
      time: this.time,
    };
    return startCampaign(campaigner, key, options);
  }

  /**
   * Shuts the client down before the process exits: waiting acquires reject with a
   * LockStoreError (code LOCK_CLIENT_CLOSED), requests still in flight are awaited (an attempt
   * that lands after its caller gave up is released, not left holding the lock for a lease),
   * then every lock this client still holds is released. Later calls to acquire reject the same
   * way. Calling it again returns the same promise.
   */
  close(): Promise<void> {
    this.closing ??= keepingProcessAlive(this.time, this.shutDown());
    return this.closing;
  }

  /** True once close() was called. */
  get closed(): boolean {
    return this.closeStarted.signal.aborted;
  }

  private async shutDown(): Promise<void> {
    const error = closedError();
    // First, so that what must stop before a lock of this client is given up (a campaign's
    // term) learns it before any release is sent; `closed` is true from here on.
    this.closeStarted.abort(error);
    for (const queue of this.keys.values()) queue.rejectAll(error);
    await this.drainInFlight();
    // Release what is still held; a release of unknown outcome (or one the store refused) is
    // tried again a bounded number of times, so that close() does not return while it may
    // still leave a lock held.
    for (let round = 0; round <= this.engine.retry.attempts; round++) {
      const held = [...this.keys.values()].flatMap((queue) => queue.holders);
      if (held.length === 0) break;
      if (round > 0) await sleep(this.time, backoffMs(this.engine.retry, round, this.time.random));
      await Promise.allSettled(
        held.map((lock) => (lock.releasePending ? lock.retryRelease() : lock.release())),
      );
      await this.drainInFlight();
    }
    await this.leasesEnded();
  }

  /**
   * Waits for this client's store leases to end (giving back what waiters left, settling
   * releases of unknown outcome), for a bounded time: one that still has not ended is reported
   * as 'unsettled' (the store did not answer; a finite lease runs out by itself).
   */
  private async leasesEnded(): Promise<void> {
    const open = [...this.leases];
    if (open.length === 0) return;
    // As many tries as a store request gets, at the writers' own retry pace.
    const { retry } = this.engine;
    const boundMs = retry.attempts * Math.min(retry.maxMs, WRITER_RETRY_BASES * retry.baseMs);
    const ended = Promise.allSettled(open.map((lease) => lease.ended));
    await Promise.race([ended, sleep(this.time, boundMs, undefined, { keepAlive: true })]);
    for (const lease of open) {
      if (lease.isOver) continue;
      const error = new LockStoreError(
        `The store did not answer while lock "${lease.key}" was given back; a finite lease runs out by itself.`,
        { retryable: true, reason: 'unavailable' },
      );
      this.report({ type: 'unsettled', key: lease.key, error });
    }
  }

  private async drainInFlight(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private throwIfClosed(): void {
    if (this.closed) throw closedError();
  }

  /** @internal Keeps `work` among what close() waits for. */
  track<R>(work: Promise<R>): Promise<R> {
    this.inFlight.add(work);
    const forget = () => this.inFlight.delete(work);
    work.then(forget, forget);
    return work;
  }

  // ---- LockHost -------------------------------------------------------------------------

  /** @internal */
  report(event: LockEventReport): void {
    if (!this.onEvent) return;
    reportEvent(this.onEvent, {
      ...event,
      owner: this.owner,
      at: this.engine.clock.time.now(),
    } as LockEvent);
  }

  /** @internal */
  checkData(data: unknown, record: LockRecord | undefined): void {
    this.engine.checkData(data, record);
  }

  /** @internal Frees the lease, or hands it straight to a local waiter. */
  async releaseLease(lock: Lock<unknown>, data?: { value: unknown }): Promise<void> {
    const queue = this.keys.get(lock.key);
    if (!queue) return lock.lease.release(data?.value);
    return queue.release(lock, data);
  }

  /** @internal */
  lockEnded(lock: Lock<unknown>): void {
    this.keys.get(lock.key)?.lockEnded(lock);
  }

  /** A new store lease of this client, kept among those close() waits for until it ends. */
  private newLease(key: string, limit: number, settings: LockSettings): StoreLease {
    const { leaseMs, heartbeatMs, verifyMs, context } = settings;
    const lockId = this.time.randomId();
    const request = { key, lockId, context, leaseMs, limit, heartbeatMs, verifyMs, pacedByCaller: true };
    return this.adopt(this.engine.newLease(request));
  }

  private adopt(lease: StoreLease): StoreLease {
    // Made while a forceRelease of its key is on its way: what it writes meanwhile proves nothing.
    for (const during of this.forcing.get(lease.key) ?? []) during.add(lease.forceReleasing());
    this.leases.add(lease);
    void lease.ended.then(() => this.leases.delete(lease));
    return lease;
  }

  // ---- acquiring ------------------------------------------------------------------------

  private prepare(key: string, options: AcquireOptions): AcquireRequest {
    this.checkKey(key);
    return prepareAcquire(options, this.engine, this.settings, this.verifyMs);
  }

  private checkKey(key: unknown): asserts key is string {
    checkKeyShape(key);
    this.engine.checkKey(key);
  }

  private async tryOnce(
    key: string,
    request: AcquireRequest,
  ): Promise<
    { lock: Lock<unknown>; holder?: undefined } | { lock?: undefined; holder: HolderSummary | undefined }
  > {
    const { limit } = request;
    const queue = this.keys.get(key);
    if (queue) checkLocalLimit(queue, limit);
    // Held or queued here, or being force-released here (a lease won now would be given back): no request.
    if (queue?.busy || this.forceReleases.forcing(key)) return { holder: queue?.holderSummary() };
    const checking = this.engine.beforeClaim(key);
    if (checking) await checking;
    const lease = this.newLease(key, limit, request.settings);
    let result: Awaited<ReturnType<StoreLease['attempt']>>;
    try {
      result = await lease.attempt();
      if ('held' in result) this.engine.checkHeld(key, limit, result.held);
    } catch (error) {
      // Nobody tries it again: whatever it may still win is given back.
      lease.giveUp();
      // It ended with what it won given back (not to be trusted): no lock, as a busy key.
      if (error instanceof LockLostError && lease.isOver) return { holder: undefined };
      throw error;
    }
    if ('held' in result) {
      lease.giveUp();
      const seen = this.queueFor(key, limit);
      seen.sawHeld(result.held);
      const holder = seen.holderSummary();
      this.forgetIfIdle(seen);
      return { holder };
    }
    const start = this.startOf(lease, result.token, request.settings);
    return { lock: this.holdWon(key, limit, lease, request.settings, start) };
  }

  /** Where a caller took `lease` with `token`: now, with its own context. */
  private startOf(lease: StoreLease, token: number, settings: LockSettings) {
    const record = lease.record;
    const entry = record && holdersOf(record).find((holder) => holder.lockId === lease.lockId);
    const acquiredAt = entry?.acquiredAt ?? this.time.now();
    return { token, acquiredAt, context: settings.context, owner: this.owner };
  }

  /**
   * The lock for a lease just won, in the key's queue. When the queue now belongs to another
   * limit (a call with it came in meanwhile), the lease is given back before the error is thrown.
   */
  private holdWon(
    key: string,
    limit: number,
    lease: StoreLease,
    settings: LockSettings,
    start: LockStart,
  ): Lock<unknown> {
    let queue: KeyQueue<Lock<unknown>, LockSettings>;
    try {
      queue = this.queueFor(key, limit);
    } catch (error) {
      lease.giveUp();
      throw error;
    }
    return queue.hold(lease, start.token, settings, {}, start);
  }

  private wait(
    key: string,
    request: AcquireRequest,
    waitMs: number,
    signal: AbortSignal | undefined,
  ): Promise<Lock<unknown>> {
    // Before the key's queue is made: a refused wait must not leave an idle queue behind.
    signal?.throwIfAborted();
    const queue = this.queueFor(key, request.limit);
    const lease = this.newLease(key, request.limit, request.settings);
    return queue.wait({ lease, settings: request.settings }, waitMs, signal);
  }

  /** The key's queue, made when the key has none; refused when its holders and waiters use another limit. */
  private queueFor(key: string, limit: number): KeyQueue<Lock<unknown>, LockSettings> {
    let queue = this.keys.get(key);
    if (queue && queue.limit !== limit && queue.idle) {
      this.keys.delete(key);
      queue = undefined;
    }
    if (queue) {
      checkLocalLimit(queue, limit);
      return queue;
    }
    queue = new KeyQueue(key, this.queueHost, limit);
    this.keys.set(key, queue);
    return queue;
  }

  private forgetIfIdle(queue: { readonly key: string; readonly idle: boolean }): void {
    if (queue.idle && this.keys.get(queue.key) === queue) this.keys.delete(queue.key);
  }

  private holderSummary(key: string): HolderSummary | undefined {
    return this.keys.get(key)?.holderSummary();
  }

  /** What this client's key queues use of it. */
  private makeQueueHost(): QueueHost<Lock<unknown>, LockSettings> {
    return {
      engine: this.engine,
      settings: this.settings,
      isClosing: () => this.closed,
      reportsEvents: () => this.onEvent !== undefined,
      report: (event) => this.report(event),
      track: (work) => this.track(work),
      forcing: (key) => this.forceReleases.forcing(key),
      newLease: (key, limit, settings) => this.newLease(key, limit, settings),
      createLock: (lease, token, settings, passedFrom, start) =>
        new Lock<unknown>(this, lease, start ?? this.startOf(lease, token, settings), settings, passedFrom),
      canPass: (lock, next) => lock.canPassTo(next.settings),
      leaseMsOf: (settings) => storedLease(settings.leaseMs),
      contextOf: (settings) => settings.context,
      holderSummary: (key) => this.holderSummary(key),
      requeue: (key, limit, waiter) => {
        try {
          this.queueFor(key, limit).requeue(waiter);
        } catch (error) {
          waiter.reject(error); // the key is now held here with another limit
        }
      },
      forget: (queue) => this.forgetIfIdle(queue),
      closedError,
    };
  }
}

/** Refuses a call whose limit differs from the one this client's holders and waiters of the key use. */
function checkLocalLimit(
  queue: { readonly key: string; readonly limit: number; readonly idle: boolean },
  limit: number,
): void {
  if (queue.limit === limit || queue.idle) return;
  throw new LockLimitMismatchError(queue.key, queue.limit, limit, 'or awaited in this client ');
}

/** A store lease retries its own reads and writes this many retry bases apart (cas/lease-protocol.ts). */
const WRITER_RETRY_BASES = 4;

/** A lock nothing renews reads its record every this many poll intervals. */
const VERIFY_POLLS = 5;

function closedError(): LockStoreError {
  return new LockStoreError('This LockClient was closed; create a new one to lock again.', {
    retryable: false,
    code: 'LOCK_CLIENT_CLOSED',
    reason: 'closed',
  });
}

/**
 * Calls `onLost` when `signal` aborts for a loss (at once if it already has): not for another
 * reason (a campaign's term ending as its client closes), and never letting it throw into the
 * abort, where nothing would catch it.
 */
function watchLoss(signal: AbortSignal, onLost: (error: LockLostError) => void): void {
  const call = () => {
    if (!(signal.reason instanceof LockLostError)) return;
    try {
      onLost(signal.reason);
    } catch {
      // a throwing hook must not break the client
    }
  };
  if (signal.aborted) call();
  else signal.addEventListener('abort', call, { once: true });
}
