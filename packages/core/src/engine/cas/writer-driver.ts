import type { LeaseHolder, LockRecord, SlotHolder, VersionedRecord } from '../../contract/lock-record.js';
import type { ClaimRequest, LockStore, WriteCondition } from '../../contract/lock-store.js';
import { seqOf, writeIdOf } from '../../protocol/write-id.js';
import type { WriteAnswer, WriterAction, WriterEvent } from '../../protocol/writer-events.js';
import {
  effectiveDeadline,
  effectiveLeaseMs,
  newWriter,
  type WriterEnd,
  type WriterState,
  type WriterTerms,
} from '../../protocol/writer-state.js';
import { step } from '../../protocol/writer-step.js';
import type { ClockMode } from '../../shared/clock.js';
import { deferred } from '../../shared/deferred.js';
import { LockLostError, LockNotHeldError, LockStoreError } from '../../shared/errors.js';
import type { Scheduler } from '../../shared/scheduler.js';
import type { AttemptResult, LeaseWatcher, StoreLease } from '../store-lease.js';
import { lossError } from './loss-error.js';
import { holdersOf, limitOf, slotView } from './slot-records.js';
import { storedExpiry } from './stored-expiry.js';
import { SuspendWatch } from './suspend-watch.js';
import { changeFailed, noAnswer, releaseFailed } from './writer-errors.js';
import { recordFor } from './writer-records.js';
import { WriterTimers } from './writer-timers.js';
import { writerView } from './writer-view.js';

export interface WriterDriverOptions {
  readonly store: LockStore;
  readonly key: string;
  /** The acquisition: the holder entry this writer writes. */
  readonly lockId: string;
  /** The writer's id: no `:` in it (write-id.ts). */
  readonly writer: string;
  readonly owner: string;
  /** The context the holder entry stores (the caller's `context` option). */
  readonly context?: string;
  /** When the acquisition began (wall clock), for a writer that takes one over (a resume); default: its claim's send. */
  readonly acquiredAt?: number;
  /** `claimBy: 'state'`: DynamoDB's one-request claim, for a finite lock on a store that offers it. */
  readonly terms: WriterTerms;
  /** This client's clock mode (default trusted): on untrusted clocks a holder stores no expiry (stored-expiry.ts). */
  readonly clockMode?: ClockMode;
  /** Trusted clocks: how far the holders' clocks may disagree (the one-request claim's margin). */
  readonly toleranceMs?: number;
  /** 1: a lock; more: a semaphore. */
  readonly limit: number;
  /**
   * What its client last saw of the key: `written` when its own write left that record (its
   * version is then current unless someone wrote since, and a claim goes by it); a record only
   * read is looked at again first. Undefined: never seen (a claim creates the record).
   */
  readonly seen?: () =>
    | { readonly current: VersionedRecord | null; readonly written: boolean; readonly tokenFloor: number }
    | undefined;
  /** Called with each record the writer learns of: read, or `written` by one of its own writes. */
  readonly onSeen?: (current: VersionedRecord | null, written: boolean) => void;
  readonly time: Scheduler;
  /** Whether a held record may be claimed now, as this client's clock mode judges it. */
  readonly claimable: (current: VersionedRecord) => boolean;
  /** The holders of a semaphore record that still hold it, as this client judges them (default: each by `claimable`). */
  readonly liveSlots?: (current: VersionedRecord) => SlotHolder[];
  /** Called each time a write of the holder lands and trusts its lease anew (a heartbeat, an extend, an update). */
  readonly onRenewed?: () => void;
  /**
   * The caller decides when a waiting writer looks at the key again (one poller for a key's
   * local waiters, with its own pace and backoff): the writer arms no retry timer of its own
   * while it waits, and each `attempt()` is one try. Resolving its own writes stays its own.
   */
  readonly pacedByCaller?: boolean;
}

export type { AttemptResult } from '../store-lease.js';

/**
 * Drives one writer of the state machine against a store: performs the actions `step` returns
 * (requests, timers, answers to the caller) and feeds what happens back as events. It owns the
 * promises, the timers and the records by version, and decides nothing: the store lease of the
 * compare-and-swap engine, which LockClient's Locks and key queues drive.
 */
export class WriterDriver implements StoreLease {
  #state: WriterState;
  /** The records seen, by version: a write is built on the record its condition names. */
  readonly #records = new Map<string, VersionedRecord>();
  readonly #timers: WriterTimers;
  readonly #acquired = deferred<number>();
  /** The callers' releases not answered yet: a second call (other data) is answered with the first. */
  #releases: ReturnType<typeof deferred<void>>[] = [];
  readonly #ended = deferred<WriterEnd>();
  readonly #lost = new AbortController();
  /** The writer this one hands its lease to, while a hand-over is under way. */
  #handingTo: WriterDriver | undefined;
  /**
   * The caller holding the lease, as its entry stores it: when it took the key (its claim's
   * send, or the local pass that gave it the lease) and its context.
   */
  #caller: { readonly acquiredAt: number; readonly context: string | undefined } | undefined;
  /** The claim `#caller` was stamped for: a copy of it sent again keeps that time, a new claim takes its own. */
  #claimSeq: number | undefined;
  /** What the last `pass` event answered: the token it gave, or undefined. */
  #passed: number | undefined;
  /** The caller's extend or update under way. */
  #changing: ReturnType<typeof deferred<void>> | undefined;
  /** The caller's calls (extend, release, hand-over) run one at a time: the last one's answer. */
  #turns: Promise<unknown> = Promise.resolve();
  /** Calls queued or under way: a local pass waits until none is. */
  #queued = 0;
  readonly #suspend = new SuspendWatch();
  /** forceReleases of this client's on their way for the key, and a count of their starts and ends. */
  #forcing = 0;
  #forceEpoch = 0;
  /** `#forceEpoch` when the write in flight was sent: a change since means a force overlapped it. */
  #sentEpoch = 0;
  /** Answers to writes that came while a forceRelease was on its way: fed once it is answered. */
  #afterForce: WriterEvent[] = [];
  /** The store's error for the last write it refused for certain (a resume reports it). */
  #refused: LockStoreError | undefined;
  /** The caller's try under way (`pacedByCaller`), and whether the writer has started. */
  #attempt: ReturnType<typeof deferred<AttemptResult>> | undefined;
  #started = false;
  /** Why the last look failed: the try under way is rejected with it. */
  #readError: unknown;
  /** The error of the last write whose outcome is unknown: a try that cannot resolve it says so. */
  #unknownError: unknown;
  /** A retry the machine asked for was left to the caller's next try: owed once the writer no longer waits for one. */
  #retryOwed = false;
  /** A one-request claim of it had an unknown outcome: a copy may land even after it ended. */
  #claimMayLandLate = false;
  /** The one-request claim of the try under way came back unknown: no read can rule it out, so the try says so. */
  #claimUnknownThisTry = false;
  /** The clocks said the machine was suspended: a loss by the deadline says so. */
  #wasSuspended = false;
  /** An acquisition this writer takes over (`resume`): its entry's token then, and the token taken. */
  #resuming: { readonly entryToken: number; readonly token: number } | undefined;
  /** Who hears what happens to the lease: the Lock holding it now. */
  #watcher: LeaseWatcher | undefined;

  constructor(private readonly options: WriterDriverOptions) {
    const { terms, store, limit } = options;
    if (terms.claimBy === 'state' && (!store.claim || terms.leaseMs === null || limit > 1)) {
      // A late copy of a one-request claim may land whenever the key is free: only a lock whose
      // lease ends by itself can afford that, as today's engine decides too.
      throw new Error(
        'WriterDriver: the one-request claim needs a store that offers it, a finite lease and a lock',
      );
    }
    this.#timers = new WriterTimers(options.time, (timer) =>
      this.#observe({ type: 'timer', timer, now: this.#now() }),
    );
    if (options.acquiredAt !== undefined)
      this.#caller = { acquiredAt: options.acquiredAt, context: options.context };
    // A semaphore slot never passes on locally: the tokens above its own are other holders'.
    this.#state = newWriter(options.writer, limit > 1 ? { ...terms, slot: true } : terms);
    // Nobody awaits these when things go another way.
    this.#acquired.promise.catch(() => undefined);
  }

  /** The writer's state, for checks and inspection. */
  get state(): WriterState {
    return this.#state;
  }

  get key(): string {
    return this.options.key;
  }

  get lockId(): string {
    return this.options.lockId;
  }

  get isOver(): boolean {
    return this.#state.end !== null;
  }

  /** Whether a copy of a one-request claim of it may still land (see `#claimMayLandLate`). */
  get claimMayLandLate(): boolean {
    return this.#claimMayLandLate;
  }

  /** A compare-and-swap store hands a lease to a waiter in one write. */
  readonly handsOver = true;

  get heldToken(): number | undefined {
    const { goal, lease, end } = this.#state;
    return end === null && goal.kind === 'hold' && lease ? lease.token : undefined;
  }

  /** Resolves with the fencing token once the lease is held (won by a claim, or handed over). */
  get acquired(): Promise<number> {
    return this.#acquired.promise;
  }

  wrote(writeId: string): boolean {
    return seqOf(writeId, this.options.writer) !== undefined;
  }

  watch(watcher: LeaseWatcher | undefined): void {
    this.#watcher = watcher;
  }

  /** Aborts when the lease is lost. */
  get signal(): AbortSignal {
    return this.#lost.signal;
  }

  /** Settles once the writer ends (released, handed over, lost or given up), with how. */
  get ended(): Promise<WriterEnd> {
    return this.#ended.promise;
  }

  /** Starts claiming; resolves with the fencing token once held. */
  acquire(): Promise<number> {
    if (this.#started) return this.#acquired.promise;
    // What its client knows of the key now: a record its own write left is current unless
    // someone wrote since (a claim goes by it); any other may be stale, and is looked at first
    // (the retry timer reads).
    let looksFirst = false;
    if (!this.#inPlay()) {
      const seen = this.options.seen?.();
      if (seen) {
        // A record left held (by another acquisition of this client, too) may have been freed
        // or taken since by someone else: only a free or claimable one its own write left (or
        // none) is gone by without a look. Tokens go on above any its client saw.
        const view = this.#view(seen.current, false);
        const trusted = (seen.written || seen.current === null) && view.claimable;
        looksFirst = !trusted;
        const floor =
          view.token < seen.tokenFloor ? { token: seen.tokenFloor, belowFloor: true as const } : {};
        const known = { ...view, ...floor, claimable: trusted };
        this.#state = { ...this.#state, known };
      }
    }
    this.#started = true;
    this.#feed(
      looksFirst ? { type: 'timer', timer: 'retry', now: this.#now() } : { type: 'start', now: this.#now() },
    );
    return this.#acquired.promise;
  }

  /**
   * One try at the key, for a writer paced by its caller: a claim (after a look, unless the key
   * was last seen claimable or never seen), answered once its outcome is known. Resolves with
   * the token, or with the record that shows the key held; rejects with the store's error when
   * the look failed or the store refused the claim, and with LockLostError once the writer ended.
   */
  attempt(): Promise<AttemptResult> {
    if (!this.options.pacedByCaller)
      throw new Error('WriterDriver: attempt() is for a writer paced by its caller');
    if (this.#attempt) return this.#attempt.promise;
    const attempt = deferred<AttemptResult>();
    this.#attempt = attempt;
    this.#claimUnknownThisTry = false;
    this.check(); // a lease won meanwhile is looked at first: a suspend since may have ended it
    const { end, goal, lease } = this.#state;
    if (end !== null) {
      this.#settleAttempt(this.#endedError(end));
    } else if (goal.kind === 'hold' && lease) {
      this.#settleAttempt({ token: lease.token }); // handed the lease meanwhile
    } else if (!this.#started) {
      this.acquire().catch(() => undefined);
      // Something moved it before its first try (a hand-over that then failed): this try goes on.
      if (this.#attempt && this.#retryOwed) {
        this.#retryOwed = false;
        this.#observe({ type: 'timer', timer: 'retry', now: this.#now() });
      }
    } else {
      this.#retryOwed = false;
      this.#observe({ type: 'timer', timer: 'retry', now: this.#now() });
    }
    return attempt.promise;
  }

  /**
   * A caller asks again (a release, an extend) while a write of unknown outcome waits to be
   * looked at again: the writer looks now instead of at its retry time.
   */
  #lookNow(): void {
    if (this.#state.end !== null || this.#state.pending?.status !== 'backoff') return;
    this.#timers.cancel('retry');
    this.#observe({ type: 'timer', timer: 'retry', now: this.#now() });
  }

  /** What a caller waiting to acquire hears once the writer ended. */
  #endedError(end: WriterState['end']): LockLostError {
    return new LockLostError(this.options.key, `the acquisition ended (${end})`);
  }

  /** Answers the try under way: with a result, or rejected with `error`. */
  #settleAttempt(outcome: AttemptResult | unknown): void {
    const attempt = this.#attempt;
    if (!attempt) return;
    this.#attempt = undefined;
    if (outcome instanceof Error) attempt.reject(outcome);
    else attempt.resolve(outcome as AttemptResult);
  }

  /** Whether the writer waits for the key with nothing of its own to resolve: its caller's pace decides the next try. */
  #waitsForCaller(): boolean {
    const { goal, lease, pending, reading } = this.#state;
    if (!this.options.pacedByCaller || goal.kind !== 'acquire' || lease || reading) return false;
    return pending === null || pending.status === 'refused';
  }

  /**
   * Takes over the acquisition `lockId` (this writer's) made elsewhere, as `current` shows it: its
   * entry is renewed first, so that writes of its old process can no longer land. Resolves with
   * its fencing token; rejects with LockNotHeldError when the entry is not there or moved on
   * before the renewal landed, with the store's LockStoreError when it refused the renewal.
   */
  resume(current: VersionedRecord, token?: number): Promise<number> {
    const floor = this.options.seen?.()?.tokenFloor ?? 0;
    const { key, lockId } = this.options;
    const entry = holdersOf(current.record).find((holder) => holder.lockId === lockId);
    if (!entry) {
      return Promise.reject(new LockNotHeldError(key, 'the record holds no entry of this acquisition'));
    }
    this.#records.set(current.version, current);
    const { version, record } = current;
    // A handle's token above the entry's (passed on with no write since): the one it takes over.
    const taken = token !== undefined && token > entry.token && token <= record.token ? token : entry.token;
    this.#resuming = { entryToken: entry.token, token: taken };
    this.#feed({
      type: 'resume',
      version,
      token: taken,
      top: record.token,
      floor,
      leaseMs: entry.leaseMs,
      now: this.#now(),
    });
    return this.#acquired.promise.catch((error: unknown) => {
      if (this.#refused) throw this.#refused;
      throw error instanceof LockLostError
        ? new LockNotHeldError(key, 'it was released or taken over before it could be resumed')
        : error;
    });
  }

  /**
   * Releases, storing `data` when given; rejects when the lease was lost or the store refused.
   * With `holdMs` (lockAtLeastMs), the key is not freed: the lease is shortened to end `holdMs`
   * from now and left to run out.
   */
  release(data?: unknown, holdMs?: number): Promise<void> {
    // Called again once the first was answered (its outcome unknown): it joins the release under
    // way, with its data. While the first caller still waits, it waits for that answer first.
    if (this.#state.goal.kind === 'release' && this.#releases.length === 0)
      return this.#release(data, holdMs);
    return this.#inTurn(() => this.#release(data, holdMs));
  }

  #release(data: unknown, holdMs: number | undefined): Promise<void> {
    this.#lookNow();
    const { goal, end } = this.#state;
    // The machine takes a release only from a holder (or a release under way): anything else
    // would never be answered.
    if (end !== null || (goal.kind !== 'hold' && goal.kind !== 'release')) {
      return Promise.reject(
        new LockLostError(this.options.key, 'it was not held when released', { maybeApplied: false }),
      );
    }
    const released = deferred<void>();
    this.#releases.push(released);
    const text = data === undefined ? undefined : JSON.stringify(data);
    this.#feed(
      holdMs === undefined
        ? { type: 'release', data: text, now: this.#now() }
        : { type: 'release', data: text, holdMs, now: this.#now() },
    );
    return released.promise;
  }

  /**
   * Releases straight to `next`, a writer of this client waiting for the same key, in one write
   * (storing `data` when given): `next`'s acquire resolves once it landed. Rejects as release does.
   */
  handOver(next: StoreLease, data?: unknown): Promise<void> {
    return this.#inTurn(() => this.#handOver(next, data));
  }

  #handOver(next: StoreLease, data: unknown): Promise<void> {
    const { goal, end } = this.#state;
    if (
      end !== null ||
      goal.kind !== 'hold' ||
      !(next instanceof WriterDriver) ||
      next.options.key !== this.options.key
    ) {
      return Promise.reject(
        new LockLostError(this.options.key, 'it was not held when handed over', { maybeApplied: false }),
      );
    }
    this.#handingTo = next;
    const released = deferred<void>();
    this.#releases.push(released);
    const text = data === undefined ? undefined : JSON.stringify(data);
    const { leaseMs } = next.options.terms;
    this.#feed({ type: 'handOver', to: next.options.writer, leaseMs, data: text, now: this.#now() });
    return released.promise;
  }

  /**
   * Renews now, for a lease of `leaseMs` (null: fail-closed), storing `data` when given: an
   * extend, or with the writer's own lease length an update. Resolves once it landed; rejects
   * with LockStoreError when the store refused it (the lease stands as it was) or LockLostError
   * when the lease ended first. A second call waits for the first's answer.
   */
  extend(leaseMs: number | null, data?: unknown): Promise<void> {
    return this.#inTurn(() => this.#change(leaseMs, data));
  }

  /** Runs `call` now, or once every call before it was answered: the machine takes one at a time. */
  #inTurn<T>(call: () => Promise<T>): Promise<T> {
    const answered = this.#queued === 0 ? call() : this.#turns.then(call, call);
    this.#queued++;
    const done = () => {
      this.#queued--;
    };
    this.#turns = answered.then(done, done);
    return answered;
  }

  #change(leaseMs: number | null, data: unknown): Promise<void> {
    this.#lookNow();
    const { goal, end } = this.#state;
    if (end !== null || goal.kind !== 'hold') {
      return Promise.reject(
        new LockLostError(this.options.key, 'it was not held when extended', { maybeApplied: false }),
      );
    }
    const changing = deferred<void>();
    this.#changing = changing;
    const text = data === undefined ? undefined : JSON.stringify(data);
    this.#feed({ type: 'extend', leaseMs, data: text, now: this.#now() });
    return changing.promise;
  }

  #takeChange() {
    const changing = this.#changing;
    this.#changing = undefined;
    return changing;
  }

  /**
   * Passes the lease to another caller of this client, asking for a lease of `leaseMs`, with no
   * request: the token it holds on, or undefined when the lease must be handed over with a write
   * (writer-step.ts passToken says when). The next write stores the caller's fields.
   */
  passLocally(leaseMs: number | null, context?: string): number | undefined {
    // A call of the caller still under way (an update) would otherwise apply to the next one's lease.
    if (this.#queued > 0) return undefined;
    this.check(); // a suspend the clocks show ends the lease before it is passed on
    this.#passed = undefined;
    this.#feed({ type: 'pass', leaseMs, now: this.#now() });
    if (this.#passed !== undefined) this.#caller = { acquiredAt: this.options.time.now(), context };
    return this.#passed;
  }

  /**
   * A forceRelease of this client's for the key begins: the lease ends at once, and a write in
   * flight confirms nothing (it may have landed before the force). Call `end` once the
   * forceRelease is answered: a write sent meanwhile confirms nothing either.
   */
  forceReleasing(): { end(): void } {
    this.#forcing++;
    this.#forceEpoch++;
    // A writer that has not started sends nothing yet: the machine must not be moved to act.
    if (this.#inPlay()) this.#feed({ type: 'forceReleased', now: this.#now() });
    let ended = false;
    return {
      end: () => {
        if (ended) return;
        ended = true;
        this.#forcing--;
        this.#forceEpoch++;
        if (this.#forcing > 0 || this.#afterForce.length === 0) return;
        const held = this.#afterForce.map((event) => ({ ...event, now: this.#now() }));
        this.#afterForce = [];
        if (this.#inPlay()) this.#feed({ type: 'forceReleased', now: this.#now() }, ...held);
      },
    };
  }

  /**
   * Its client saw `current` otherwise (another writer's write, a semaphore's other slot; or a
   * read): the next write of this holder may build on it instead of the version its own last
   * write left (which would fail), or it learns that someone took the key.
   */
  sawRecord(current: VersionedRecord): void {
    if (this.#state.end !== null || this.#state.lease === null) return;
    this.#feed({ type: 'seen', view: this.#view(current, false), now: this.#now() });
  }

  /** Whether the writer has started, or was handed a lease (or an acquisition to resume) without starting. */
  #inPlay(): boolean {
    const { seq, lease, known } = this.#state;
    return this.#started || seq > 0 || lease !== null || known?.own !== undefined;
  }

  /** The caller stops waiting (or closes): whatever the writer may own is given back. */
  giveUp(): void {
    this.#feed({ type: 'giveUp', now: this.#now() });
    // A try its caller paced is over: nobody waits for what it may win (the writer gives that
    // back on its own), and a caller awaiting the try (close() draining a poller) must not wait
    // for the store to answer.
    const version = this.#state.known?.version;
    this.#settleAttempt({ held: version ? (this.#records.get(version) ?? null) : null });
  }

  #now(): number {
    return this.options.time.monotonic();
  }

  /**
   * Checks the clocks now, without waiting for a timer: a lease past its deadline (or a suspend
   * the monotonic clock missed) ends at once, and `signal` says so before this returns. A
   * process that was paused learns it on its first look.
   */
  check(): void {
    // Only when something is due: an event re-arms the timers, and a caller that checks in a
    // loop must not keep postponing its own renewal.
    if (this.#state.end !== null || this.#state.lease === null) return;
    const now = this.#now();
    const suspendedMs = this.#suspendedMs();
    if (suspendedMs !== undefined) this.#feed({ type: 'suspended', ms: suspendedMs, now });
    else if (now >= effectiveDeadline(this.#state)) this.#feed({ type: 'timer', timer: 'deadline', now });
  }

  /** The record as the writer's lease (or, before it holds one, its last look) last saw it. */
  get record(): LockRecord | undefined {
    const { lease, known } = this.#state;
    const version = lease?.version ?? known?.version;
    return version ? this.#records.get(version)?.record : undefined;
  }

  /** How many records the driver keeps: a lease renewed for a long time must not grow it. */
  get recordsKept(): number {
    return this.#records.size;
  }

  /**
   * Feeds an event that comes from outside (a timer, a store's answer), once the clocks have
   * been checked for a suspend that the monotonic clock missed.
   */
  #observe(event: WriterEvent): void {
    const before: WriterEvent[] = [];
    const suspendedMs = this.#suspendedMs();
    if (suspendedMs !== undefined) before.push({ type: 'suspended', ms: suspendedMs, now: this.#now() });
    // While a forceRelease is on its way, an answer can prove nothing yet: it waits for the force.
    if (event.type === 'written' && this.#forcing > 0) {
      this.#afterForce.push(event);
      return;
    }
    // The answer to a write that overlapped a forceRelease of this client proves nothing.
    const overlapped = this.#sentEpoch !== this.#forceEpoch;
    if (event.type === 'written' && overlapped) before.push({ type: 'forceReleased', now: this.#now() });
    this.#feed(...before, event);
  }

  /**
   * How much longer (ms) the clocks say the machine was suspended since the last write than its
   * monotonic clock counted, or undefined when they agree; told once. Past the expiry the lease
   * stored, as much as ends it now.
   */
  #suspendedMs(): number | undefined {
    const { lease, end } = this.#state;
    // A fail-closed lease with a renewal on its way that makes it finite counts as finite.
    const leaseMs = effectiveLeaseMs(this.#state);
    if (leaseMs === null || end !== null) return undefined;
    const now = this.#now();
    const deadline = effectiveDeadline(this.#state);
    // Past the deadline by the monotonic clock too: a blocked event loop, not a suspend (the
    // deadline ends the lease).
    if (lease !== null && now >= deadline) return undefined;
    const wall = this.options.time.now();
    let ms = this.#suspend.unexplainedMs(wall, now, leaseMs);
    if (lease !== null && wall >= (this.#storedExpiry(lease.version) ?? Number.POSITIVE_INFINITY))
      ms = Math.max(ms ?? 0, deadline - now);
    if (ms !== undefined) {
      this.#suspend.sent(wall, now); // the clocks agree again from here
      this.#wasSuspended = true;
    }
    return ms;
  }

  /** The expiry this writer's entry in the record at `version` stores (waiters on trusted clocks go by it). */
  #storedExpiry(version: string): number | null | undefined {
    const record = this.#records.get(version)?.record;
    return record && holdersOf(record).find((entry) => entry.lockId === this.options.lockId)?.expiresAt;
  }

  /** Steps the machine through `events` in order, performing each step's actions. */
  #feed(...events: WriterEvent[]): void {
    for (const event of events) {
      const { state, actions } = step(this.#state, event);
      this.#state = state;
      for (const action of actions) this.#perform(action);
    }
    // Only after the last: a record a store's answer brought is not yet known to the machine before.
    this.#forgetRecords();
    // The caller gave up, or the writer was handed the lease, while a retry was left to the
    // caller's next try: the writer takes it up itself (a refused claim is then settled).
    if (this.#retryOwed && this.#state.end === null && !this.#waitsForCaller()) {
      this.#retryOwed = false;
      this.#perform({ type: 'arm', timer: 'retry', at: this.#now() });
    }
  }

  /**
   * Keeps only the records a later write may be built on: the one the writer knows, its lease's,
   * and its pending write's condition (a write looks its record up before it first waits).
   */
  #forgetRecords(): void {
    const { known, lease, pending } = this.#state;
    const keep = new Set<string>();
    if (known?.version) keep.add(known.version);
    if (lease) keep.add(lease.version);
    if (pending?.condition.kind === 'version') keep.add(pending.condition.version);
    // Answers held back while a forceRelease is on its way: their records are fed later.
    for (const event of this.#afterForce) {
      if (event.type === 'written' && event.answer.kind === 'ok') keep.add(event.answer.version);
      if (event.type === 'written' && event.answer.kind === 'conflict' && event.answer.view?.version)
        keep.add(event.answer.view.version);
    }
    for (const version of this.#records.keys()) {
      if (!keep.has(version)) this.#records.delete(version);
    }
  }

  #perform(action: WriterAction): void {
    switch (action.type) {
      case 'read':
        void this.#read(action.for);
        return;
      case 'write':
        // A paced writer that must renew an entry of its own it does not trust (its claim landed
        // too late, or overlapped a forceRelease here) ends its try there: it holds nothing its
        // caller may use yet, and the caller's next try hears how the renewal went.
        if (this.#attempt && this.#state.goal.kind === 'acquire' && action.intent.kind === 'renew') {
          const version = action.condition.kind === 'version' ? action.condition.version : undefined;
          this.#settleAttempt({ held: version ? (this.#records.get(version) ?? null) : null });
        }
        void this.#write(action);
        return;
      case 'arm': {
        const { goal, pending } = this.#state;
        if (
          action.timer === 'retry' &&
          this.#attempt &&
          goal.kind === 'acquire' &&
          pending?.status === 'backoff'
        ) {
          // Its claim's outcome is still unknown and the store does not answer: the try says so
          // (the writer goes on resolving it at its own pace; the caller decides whether to wait).
          this.#settleAttempt(this.#unknownError ?? this.#readError ?? noAnswer());
          this.#readError = undefined;
        }
        if (
          action.timer === 'retry' &&
          goal.kind === 'acquire' &&
          goal.resuming &&
          pending?.status === 'backoff'
        ) {
          // A resume whose renewal may have landed, and the look that would tell failed: its
          // caller hears so now, and the writer gives back what it may have taken over.
          this.#acquired.reject(this.#unknownError ?? noAnswer());
          queueMicrotask(() => this.giveUp());
        }
        if (action.timer === 'retry' && this.#waitsForCaller()) {
          // The try is over: say what it found; the caller's next try feeds the retry.
          const unknown = this.#claimUnknownThisTry ? this.#unknownError : undefined;
          const error = this.#readError ?? (this.#state.pending ? this.#refused : undefined) ?? unknown;
          this.#readError = undefined;
          this.#retryOwed = true;
          if (error) this.#settleAttempt(error);
          else {
            const version = this.#state.known?.version;
            this.#settleAttempt({ held: version ? (this.#records.get(version) ?? null) : null });
          }
          return;
        }
        this.#timers.arm(action.timer, action.at, this.#now());
        return;
      }
      case 'acquired':
        this.#acquired.resolve(action.token);
        this.#settleAttempt({ token: action.token });
        return;
      case 'lost': {
        const { key, lockId } = this.options;
        const version = this.#state.known?.version;
        const record =
          version === null ? null : version === undefined ? undefined : this.#records.get(version);
        const error =
          action.why === 'expired'
            ? lossError(key, lockId, { why: 'expired', suspended: this.#wasSuspended })
            : lossError(key, lockId, { why: 'taken', record });
        this.#lost.abort(error);
        this.#watcher?.lost(error);
        return;
      }
      case 'extended':
        this.#takeChange()?.resolve();
        this.#tellRenewed();
        return;
      case 'renewed':
        this.#tellRenewed();
        return;
      case 'passed':
        this.#passed = action.token;
        return;
      case 'notPassed':
        return;
      case 'released':
        for (const released of this.#takeReleases()) released.resolve();
        return;
      case 'failed': {
        const said = { unknown: this.#unknownError, refused: this.#refused };
        if (action.op === 'extend') {
          this.#takeChange()?.reject(changeFailed(this.options.key, action, said));
          return;
        }
        const error = releaseFailed(this.options.key, action, said);
        for (const released of this.#takeReleases()) released.reject(error);
        return;
      }
      case 'passTo': {
        const next = this.#handingTo;
        if (next?.options.writer !== action.to)
          throw new Error('WriterDriver: a hand-over to a writer it never named');
        // The waiter takes the lease as the hand-over wrote it; one that gave up meanwhile gives it back.
        const { version, token, top, leaseMs, sentAt, distrusted } = action;
        // The record the hand-over wrote: the waiter's next write is built on it.
        const record = this.#records.get(version);
        if (record) next.#records.set(version, record);
        const now = this.#now();
        next.#feed({
          type: 'handedOver',
          version,
          token,
          top,
          leaseMs,
          sentAt,
          now,
          ...(distrusted ? { distrusted } : {}),
        });
        return;
      }
      case 'ended':
        this.#timers.cancelAll();
        this.#settleAttempt(this.#endedError(action.end));
        this.#acquired.reject(this.#endedError(action.end));
        this.#ended.resolve(action.end);
        for (const released of this.#takeReleases()) {
          released.reject(new LockLostError(this.options.key, `the lease ended (${action.end})`));
        }
        this.#takeChange()?.reject(new LockLostError(this.options.key, `the lease ended (${action.end})`));
        this.#watcher?.ended(action.end);
        return;
    }
  }

  #tellRenewed(): void {
    this.options.onRenewed?.();
    this.#watcher?.renewed();
  }

  #takeReleases() {
    const releases = this.#releases;
    this.#releases = [];
    return releases;
  }

  #view(current: VersionedRecord | null, fromStore = true) {
    if (current) this.#records.set(current.version, current);
    if (fromStore) this.options.onSeen?.(current, false);
    const claimable = current === null || this.#claimable(current);
    // Taking an acquisition over, nothing written yet: its entry stays ours to renew (writer-view.ts).
    const { goal, lease } = this.#state;
    const resumed = goal.kind === 'acquire' && goal.resuming && lease === null ? this.#resuming : undefined;
    return writerView(current, this.options.writer, this.options.lockId, claimable, resumed);
  }

  #claimable(current: VersionedRecord): boolean {
    if (this.options.limit > 1) {
      // Never beside live holders that count against another limit (a plain lock's is 1): each
      // side would count against its own, and together exceed both (slot-records.ts checkSameLimit).
      const live = this.#live(current);
      if (live.length > 0 && limitOf(current.record) !== this.options.limit) return false;
      return live.length < this.options.limit;
    }
    return current.record.holder === null || this.options.claimable(current);
  }

  #live(current: VersionedRecord): SlotHolder[] {
    if (this.options.liveSlots) return this.options.liveSlots(current);
    // Without a judge of its own: each holder as `claimable` judges a lock it alone held, so a
    // slot whose lease ended is counted (and kept) no longer.
    const { version, record } = current;
    return holdersOf(record).filter(
      (slot) => !this.options.claimable({ version, record: slotView(record, slot) }),
    );
  }

  async #read(forSeq: number): Promise<void> {
    let current: VersionedRecord | null;
    try {
      current = await this.options.store.read(this.options.key);
    } catch (error) {
      if (this.options.pacedByCaller) this.#readError = error;
      // No retry reads a corrupted record (or gets past a store's own bug): the waiting caller
      // hears why, as today's acquire does, instead of waiting forever.
      if (!(error instanceof LockStoreError) && this.#state.goal.kind === 'acquire') {
        this.#settleAttempt(error);
        this.#acquired.reject(error);
        this.#observe({ type: 'readFailed', for: forSeq, now: this.#now() });
        this.giveUp();
        return;
      }
      this.#observe({ type: 'readFailed', for: forSeq, now: this.#now() });
      return;
    }
    this.#readError = undefined;
    this.#observe({ type: 'read', for: forSeq, view: this.#view(current), now: this.#now() });
  }

  async #write(action: Extract<WriterAction, { type: 'write' }>): Promise<void> {
    const { condition, intent, seq } = action;
    if (condition.kind === 'claimable') return this.#claimInOneRequest(seq, condition.version);
    const base = condition.kind === 'absent' ? null : this.#records.get(condition.version);
    if (base === undefined) throw new Error('WriterDriver: a write on a version it never saw');
    if (intent.kind === 'claim') this.#claimSent(seq);
    const { terms, lockId, limit } = this.options;
    const leaseMs = intent.kind === 'renew' || intent.kind === 'handOver' ? intent.leaseMs : terms.leaseMs;
    // A hand-over writes the waiter's holder entry: its acquisition, with the lease it takes.
    const next = this.#handingTo?.options;
    const holder =
      intent.kind === 'handOver' && next
        ? this.#holder(leaseMs, next.lockId, { acquiredAt: this.options.time.now(), context: next.context })
        : this.#holder(leaseMs, this.options.lockId, this.#caller, intent.kind === 'claim');
    const live = base && limit > 1 ? this.#live(base) : undefined;
    // A semaphore claim keeps the holders that are live now. Should one that had run out when
    // the claim was decided look live again (a wall clock stepped back, a sighting forgotten),
    // there is no free slot after all: the claim is not sent, and the machine sees the record.
    const noFreeSlot = intent.kind === 'claim' && base !== null && live !== undefined && live.length >= limit;
    const write = { writeId: writeIdOf(this.options.writer, seq), lockId, limit, holder, live };
    const record = recordFor(base?.record ?? null, intent, write);
    const storeCondition: WriteCondition =
      condition.kind === 'absent' ? { absent: true } : { version: condition.version };
    this.#suspend.sent(this.options.time.now(), this.#now());
    this.#sentEpoch = this.#forceEpoch;
    const answer = await this.#answerOf(async () => {
      if (noFreeSlot) return { ok: false, current: base };
      const outcome = await this.options.store.write(this.options.key, record, storeCondition);
      return outcome.ok ? { ...outcome, record } : outcome;
    });
    this.#observe({ type: 'written', seq, answer, now: this.#now() });
  }

  /**
   * What a write's outcome tells the machine. A conflict from a request the SDK sent more than
   * once proves nothing about an earlier copy (the read resolves it); an error that certainly
   * did not reach the store is a refusal; anything else may have landed.
   */
  async #answerOf(
    send: () => Promise<
      | { ok: true; version: string; record: LockRecord }
      | { ok: false; current?: VersionedRecord | null; maybeApplied?: boolean }
    >,
  ): Promise<WriteAnswer> {
    this.#refused = undefined;
    try {
      const outcome = await send();
      if (outcome.ok) {
        const written = { version: outcome.version, record: outcome.record };
        this.#records.set(outcome.version, written);
        this.options.onSeen?.(written, true);
        const { version, record } = outcome;
        return { kind: 'ok', version, token: tokenOf(record, this.options.lockId), top: record.token };
      }
      if (outcome.maybeApplied) {
        this.#unknownError = new LockStoreError('The store did not say whether the write landed.', {
          retryable: true,
          maybeApplied: true,
          reason: 'unavailable',
        });
        return { kind: 'unknown' };
      }
      if (outcome.current === undefined) return { kind: 'conflict' };
      return { kind: 'conflict', view: this.#view(outcome.current) };
    } catch (error) {
      if (error instanceof LockStoreError && !error.maybeApplied) {
        this.#refused = error;
        return { kind: 'refused' };
      }
      this.#unknownError = error;
      return { kind: 'unknown' };
    }
  }

  /** A claim is sent: the acquisition begins now, as its entry says (a copy sent again keeps the first time). */
  #claimSent(seq: number): void {
    if (this.#state.lease !== null || this.#claimSeq === seq) return;
    this.#claimSeq = seq;
    this.#caller = { acquiredAt: this.options.time.now(), context: this.options.context };
  }

  /**
   * The holder fields a write of this writer stores, stamped now: its caller's (a claim's, or
   * the one a local pass gave the lease to), or when handing over, those of the acquisition `lockId`.
   */
  #holder(
    leaseMs: number | null,
    lockId = this.options.lockId,
    caller = this.#caller ?? { acquiredAt: this.options.time.now(), context: this.options.context },
    claim = false,
  ): LeaseHolder {
    const { time, owner } = this.options;
    // A claim's lease counts from its acquisition, to the millisecond: what a caller sized it to
    // (a Lambda's time left) is what the store keeps; a hand-over's from the same reading too.
    const now = claim || lockId !== this.options.lockId ? caller.acquiredAt : time.now();
    const expiresAt = storedExpiry({ mode: this.options.clockMode ?? 'trusted' }, now, leaseMs);
    const holder: LeaseHolder = {
      owner,
      lockId,
      acquiredAt: caller.acquiredAt,
      renewedAt: now,
      leaseMs,
      expiresAt,
    };
    if (caller.context !== undefined) holder.context = caller.context;
    return holder;
  }

  /**
   * DynamoDB's claim in one request: the store writes the record when it is absent, free, its
   * holder's lease ended before this holder's start (less the tolerance), or it is still at the
   * version last seen claimable; the token is the stored one + 1, never below the one last seen.
   */
  async #claimInOneRequest(seq: number, version: string | null): Promise<void> {
    const { store, key, lockId, terms } = this.options;
    const claim = store.claim?.bind(store);
    if (!claim || terms.leaseMs === null)
      throw new Error('WriterDriver: no one-request claim for this writer');
    this.#claimSent(seq);
    const holder = this.#holder(terms.leaseMs, lockId, this.#caller, true);
    const writeId = writeIdOf(this.options.writer, seq);
    const record = recordFor(null, { kind: 'claim', token: 0 }, { writeId, lockId, limit: 1, holder });
    // On untrusted clocks a stored expiry means nothing here: only free, or the version seen
    // unchanged for a lease. On trusted ones, also a lease that ended before this holder's start.
    const request: ClaimRequest =
      (this.options.clockMode ?? 'trusted') === 'trusted'
        ? { record, expiredBefore: holder.acquiredAt - (this.options.toleranceMs ?? 0) }
        : { record };
    if (version !== null) request.version = version;
    const floor = this.#state.known?.token ?? 0;
    if (floor > 0) request.tokenFloor = floor;
    this.#suspend.sent(this.options.time.now(), this.#now());
    this.#sentEpoch = this.#forceEpoch;
    const answer = await this.#answerOf(() => claim(key, request));
    // Its condition is a state, not a version: a copy of it may still land after the writer
    // ended, whatever a read shows now (the engine watches for it a while, and gives it back).
    if (answer.kind === 'unknown') {
      this.#claimMayLandLate = true;
      this.#claimUnknownThisTry = true;
    }
    this.#observe({ type: 'written', seq, answer, now: this.#now() });
  }
}

/** The token of `lockId`'s entry in `record`, or the record's (a release). */
function tokenOf(record: LockRecord, lockId: string): number {
  return holdersOf(record).find((entry) => entry.lockId === lockId)?.token ?? record.token;
}
