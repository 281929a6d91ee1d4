// Longer than ~300 lines on purpose: Lock is the handle callers hold (key, token, signal, data,
// extend, update, release, `await using`) with its documentation, and its release is one state
// machine with the lock's state (held, releasing, released, lost), retried in the background.
// The keep-alive lives in LeaseKeeper.
import { holderToken } from '../contract/lock-record.js';
import type { Contender, LeaseEngine, LeaseState } from '../engine/lease-engine.js';
import { isUnknownOutcome, LockConfigError, LockLostError, LockNotHeldError } from '../shared/errors.js';
import type { LockEventReport } from '../shared/lock-events.js';
import { checkOptionKeys } from '../shared/option-keys.js';
import type { ScheduledTimer, Scheduler } from '../shared/scheduler.js';
import { checkLease, describe } from '../shared/validation.js';
import { encodeHandle } from './handle.js';
import { lossDeadline } from './lease-deadline.js';
import { type KeepingTerms, type KeptLock, LeaseKeeper, type LeaseOutcome } from './lease-keeper.js';

/** The options of `lock.release(options)` and `locks.release(key, handle, options)`. */
export interface ReleaseOptions<T = unknown> {
  /** Stored in the lock record with the release. */
  data?: T;
}
const RELEASE_OPTIONS: Record<keyof ReleaseOptions, true> = { data: true };
const RELEASE_OPTION_KEYS = Object.keys(RELEASE_OPTIONS);

/** Checks the options object of a release; `where` names the call in messages. */
export function checkReleaseOptions(where: string, options: unknown): void {
  if (typeof options !== 'object' || options === null)
    throw new LockConfigError(`${where}: options must be an object, got ${describe(options)}.`);
  checkOptionKeys(where, options, RELEASE_OPTION_KEYS);
}

/** What a Lock needs from the client that made it. */
export interface LockHost {
  readonly engine: LeaseEngine;
  /** Throws LockConfigError when `data` is not plain JSON or makes the record too large. */
  checkData(data: unknown, lease: LeaseState): void;
  /** Frees the lease, or hands it straight to a local waiter. */
  releaseLease(lock: Lock<unknown>, data?: { value: unknown }): Promise<void>;
  /** Called once when the lock ends (released or lost) so local waiters can move on. */
  lockEnded(lock: Lock<unknown>): void;
  /** Passes an event to the client's `onEvent` listener, stamping owner and time. */
  report(event: LockEventReport): void;
  /**
   * The lock ended while a write of it had an unknown outcome: make sure the record does not
   * stay held by it (release it if the write landed), in the background.
   */
  settleAbandoned(key: string, contender: Contender, when?: Promise<boolean>): void;
  /** Keeps `work` in the client's background work, which close() waits for. */
  track<R>(work: Promise<R>): Promise<R>;
  /** True once the client is closing: background retries are then bounded. */
  readonly closed: boolean;
}

export interface LockSettings extends KeepingTerms {
  onLost?: ((error: LockLostError) => void) | undefined;
  /** Keep the lock held until at least this long after acquiring, even if released sooner. */
  lockAtLeastMs?: number | undefined;
}

/**
 * - held: ours, and we can be sure of it.
 * - releasing: the caller asked to release and the outcome is not known yet (the release is
 *   retried in the background); no longer "held" for the caller.
 * - released / lost: ended.
 */
type LockState = 'held' | 'releasing' | 'released' | 'lost';

/**
 * @internal A lock as its own code sees it, read through `inspectLock` by the simulator's
 * checkers and by tests. Not exported from any entry point.
 */
export interface LockInspection {
  /** Its state: 'held' until released or lost (not `isHeld`'s deadline-aware view). */
  readonly phase: LockState;
  /** Its release failed and is being retried in the background. */
  readonly releasePending: boolean;
  /** The lease it keeps now (extend may change it); Infinity: fail-closed. */
  readonly leaseMs: number;
  /** Its renewal interval now, or false for none. */
  readonly heartbeatMs: number | false;
}

let inspect: (lock: Lock<unknown>) => LockInspection;

/**
 * @internal The typed seam into a lock's private state: checks read it here, never through a
 * cast, so that renaming a field breaks the build instead of silently blinding a check.
 */
export function inspectLock(lock: Lock<unknown>): LockInspection {
  return inspect(lock);
}

/**
 * A held lock: the handle a caller holds. Its lease keeper renews the lease in the background
 * (never keeping the process alive); `signal` aborts with a LockLostError as soon as this
 * holder can no longer be sure it holds it. The lock orders its writes, and owns release.
 */
export class Lock<T = unknown> {
  static {
    // Inside the class, so that it reads private fields by name, checked by the compiler.
    inspect = (lock) => ({
      phase: lock.state,
      releasePending: lock.releasePending,
      leaseMs: lock.settings.leaseMs,
      heartbeatMs: lock.settings.heartbeatMs,
    });
  }

  readonly key: string;
  readonly owner: string;
  /**
   * Increases on every acquisition of this key and never repeats: pass it to the resources you
   * write. (After an operator's `forceRelease` from another client, a lock this client passes
   * on before it learns of it has a token below the new holder's, so fenced resources refuse it.)
   */
  readonly fencingToken: number;
  private readonly abort = new AbortController();
  private state: LockState = 'held';
  private lostError: LockLostError | undefined;
  private releaseRetryTimer: ScheduledTimer | undefined;
  private releaseRetries = 0;
  /** Every write of this lock, in order: each names the version the one before it left. */
  private writes: Promise<unknown> = Promise.resolve();
  private readonly acquiredAtMonotonic: number;
  private readonly keeper: LeaseKeeper;
  private readonly ownContext: string | undefined;
  private readonly ownAcquiredAt: number;
  /** The handle was read (or the lock resumed from one): someone may release or resume it by handle. */
  private handleShared = false;
  /** Released by passing the lease to another caller of this client with no write. */
  private passedOn = false;

  /** @internal */
  constructor(
    private readonly host: LockHost,
    /** @internal */ readonly lease: LeaseState,
    private settings: LockSettings,
    /** The lock of this client that passed `lease` on to this one without a write. */
    passedFrom?: Lock<unknown>,
  ) {
    this.key = lease.key;
    const holder = lease.record.holder!;
    this.owner = holder.owner;
    this.fencingToken = holderToken(lease.record);
    this.ownContext = holder.context;
    this.ownAcquiredAt = holder.acquiredAt;
    if (passedFrom) {
      // The same lease, kept on: trusted no longer than the lock before trusted it, and
      // lockAtLeastMs counts from now.
      passedFrom.passedOn = true;
      this.acquiredAtMonotonic = this.time.monotonic();
      this.keeper = new LeaseKeeper(this.keptLock(), lease, host.engine, passedFrom.keeper.deadlineAt);
    } else {
      this.acquiredAtMonotonic = lease.sentAt;
      this.keeper = new LeaseKeeper(this.keptLock(), lease, host.engine);
    }
    this.keeper.arm();
  }

  /**
   * Lets another process or client release or resume this lock (`locks.release(key, handle)`,
   * `locks.resume(handle)`). Once read, the lock is handed to the next caller of this client
   * with a write, so that a handle never names a lock passed on behind it.
   */
  get handle(): string {
    if (this.state === 'held' || this.state === 'releasing') this.handleShared = true;
    return encodeHandle({
      key: this.key,
      lockId: this.lease.lockId,
      owner: this.owner,
      fencingToken: this.fencingToken,
      ...(this.passedOn ? { passedOn: true } : {}),
    });
  }

  /**
   * @internal Renews the lease now, in the order of this lock's writes: confirms the lock still
   * holds it (a LockLostError, and the lock is lost, when it was taken over elsewhere).
   */
  renewNow(): Promise<void> {
    return this.write((leaseMs) => this.host.engine.renew(this.lease, leaseMs));
  }

  /** @internal Marks the handle as known elsewhere (the lock was resumed from it). */
  shareHandle(): void {
    this.handleShared = true;
  }

  /**
   * @internal Whether this lock, being released, may pass its lease to a caller with `next`
   * terms without a write: its handle is nobody's, its writes are all settled, and the lease
   * is kept the same way (a finite lease of the same length) with time to spare.
   */
  canPassTo(next: LockSettings): boolean {
    const { leaseMs } = this.settings;
    if (this.state !== 'releasing' || this.handleShared || this.keeper.unsure) return false;
    if (!Number.isFinite(leaseMs) || next.leaseMs !== leaseMs) return false;
    return this.keeper.deadlineAt - this.time.monotonic() > leaseMs / 3;
  }

  /** The lock as its keeper sees it. */
  private keptLock(): KeptLock {
    return {
      key: this.key,
      terms: () => this.settings,
      keeping: () => this.state === 'held' || this.state === 'releasing',
      lost: () => this.state === 'lost',
      heartbeat: () => this.heartbeat(),
      leaseOutcome: (report: LeaseOutcome) => {
        if (report.outcome === 'lost') this.markLost(report.error);
        else if (report.outcome === 'renewed') {
          this.host.report({
            type: 'renewed',
            key: this.key,
            fencingToken: this.fencingToken,
            expiresAt: this.expiresAt,
          });
        }
      },
    };
  }

  /**
   * Aborts (reason: LockLostError) when the lease is lost. Not aborted by a normal release.
   * Reading it past the lease's end marks the lock lost first: a process that was paused
   * learns it on its first look, before its timers run.
   */
  get signal(): AbortSignal {
    this.keeper.checkDeadline();
    return this.abort.signal;
  }

  /** JSON data stored in the lock record (kept across releases). */
  get data(): T | undefined {
    return this.lease.record.data as T | undefined;
  }

  /** Wall-clock end of the current lease (ms since epoch) as stored; null for fail-closed locks and on untrusted clocks. */
  get expiresAt(): number | null {
    return this.lease.record.holder?.expiresAt ?? null;
  }

  /** Wall-clock time this acquisition began (ms since epoch), as stored. */
  get acquiredAt(): number {
    return this.ownAcquiredAt;
  }

  /** The human-readable context stored with the lock. */
  get context(): string | undefined {
    return this.ownContext;
  }

  /** True until released or lost; checks the lease's end on every read, like `signal`. */
  get isHeld(): boolean {
    this.keeper.checkDeadline();
    return this.state === 'held';
  }

  /** Renews now for `ms` from now, and renews by `ms` from then on. */
  async extend(ms: number): Promise<void> {
    const leaseMs = checkLease('extend(ms)', ms);
    this.host.engine.checkLeaseMs(leaseMs);
    if (this.state === 'held') this.cancelReleaseRetry(); // using the lock again: its release is the caller's again
    await this.write(
      async () => {
        await this.host.engine.renew(this.lease, leaseMs);
        const wasFailClosed = !Number.isFinite(this.settings.leaseMs);
        // A fail-closed lock made finite needs renewing from now on, at the default pace.
        const heartbeatMs =
          wasFailClosed && Number.isFinite(leaseMs) ? leaseMs / 3 : this.settings.heartbeatMs;
        this.settings = { ...this.settings, leaseMs, heartbeatMs };
      },
      { leaseMs },
    );
  }

  /** Stores `data` in the lock record without unlocking (also renews the lease). */
  async update(data: T): Promise<void> {
    this.keeper.checkDeadline();
    if (this.state === 'lost') throw this.lostError!; // a lost lock says so before anything else
    this.host.checkData(data, this.lease);
    if (this.state === 'held') this.cancelReleaseRetry(); // using the lock again: its release is the caller's again
    await this.write((leaseMs) => this.host.engine.renew(this.lease, leaseMs, { value: data }));
  }

  /**
   * Releases the lock, storing `data` when given. Resolves once the store has it; throws
   * LockLostError if the lease was lost first (then nothing was written). Calling it again
   * after a release does nothing. When it throws a store error, the release is retried in the
   * background; `isHeld` is false from then on unless the store certainly refused it.
   */
  release(options: ReleaseOptions<T> = {}): Promise<void> {
    return this.releaseAs(options, false);
  }

  /** A release: the caller's, or (`retry`) the background retry of one that failed. */
  private async releaseAs(options: ReleaseOptions<T>, retry: boolean): Promise<void> {
    checkReleaseOptions('lock.release()', options);
    const withData = 'data' in options ? { value: options.data } : undefined;
    if (withData) this.host.checkData(withData.value, this.lease);
    this.keeper.checkDeadline();
    if (this.state === 'released') {
      // Nothing to free, but data must be stored or the call must throw.
      if (withData) throw new LockNotHeldError(this.key, 'it was already released; the data was not stored');
      return;
    }
    if (this.state === 'lost') throw this.lostError!;
    this.cancelReleaseRetry();
    await this.afterWrites(() => this.finishRelease(withData, retry));
  }

  /** @internal Frees a lock no caller ever got, ignoring lockAtLeastMs (see HeldLock). */
  releaseUnused(): Promise<void> {
    this.settings = { ...this.settings, lockAtLeastMs: undefined };
    return this.release();
  }

  /** `await using lock = await locks.acquire(...)`: releases at scope exit; a lost lock is not an error here (its signal already said so). */
  async [Symbol.asyncDispose](): Promise<void> {
    try {
      await this.release();
    } catch (error) {
      if (!(error instanceof LockLostError)) throw error;
    }
  }

  /**
   * @internal Aborts `signal` with `reason` and nothing else: the lock is about to be given up
   * by its client, not by the code holding it (a campaign's term as its client closes), and
   * that code must stop first. The release itself goes on as usual.
   */
  abortSignal(reason: unknown): void {
    if (!this.abort.signal.aborted) this.abort.abort(reason);
  }

  /** @internal Ends the lock as lost: aborts `signal`, calls onLost. */
  markLost(error: LockLostError): void {
    if (this.state === 'released' || this.state === 'lost') return;
    this.state = 'lost';
    this.lostError = error;
    this.clearTimers();
    this.abort.abort(error);
    this.host.report({ type: 'lost', key: this.key, fencingToken: this.fencingToken, error });
    try {
      this.settings.onLost?.(error);
    } catch {
      // a throwing hook must not break the client
    }
    this.host.lockEnded(this as Lock<unknown>);
    // The store may still hold this lease: a write of it may still land (or may have landed),
    // or the lease it last stored never runs out and nothing showed the record taken from it
    // (lost by the clock while a shortening write was on its way, then refused). Once every
    // write is answered, the client makes sure the record does not stay held by this lock.
    const keeper = this.keeper;
    const mayStayHeld = () => !Number.isFinite(this.settings.leaseMs) && error.reason !== 'taken';
    if (keeper.writesInFlight > 0 || keeper.unsure || mayStayHeld()) {
      const writesDone = this.writes.then(() => keeper.unsure || keeper.landedAfterLoss || mayStayHeld());
      this.host.settleAbandoned(this.key, this.contender(), writesDone);
    }
  }

  /**
   * @internal After a markLost that may have left the lease held in the store (a forceRelease
   * of this client that failed): gives it back once this lock's writes are answered.
   */
  giveBack(): void {
    if (this.state !== 'lost') return;
    this.host.settleAbandoned(
      this.key,
      this.contender(),
      this.writes.then(() => true),
    );
  }

  /** @internal Ends the lock as released (by us or handed over). */
  markReleased(): void {
    if (this.state === 'released' || this.state === 'lost') return;
    this.state = 'released';
    this.clearTimers();
    this.host.report({ type: 'released', key: this.key, fencingToken: this.fencingToken });
    this.host.lockEnded(this as Lock<unknown>);
  }

  /** The release that failed and is being retried, with its data. */
  private pendingRelease: { data: { value: unknown } | undefined } | undefined;

  /** This acquisition as settling sees it: its slot's limit, and its own writes (its handle may have been resumed elsewhere). */
  private contender(): Contender {
    const terms: Contender['terms'] = { leaseMs: this.settings.leaseMs, context: this.context };
    const limit = this.lease.shared?.limit;
    if (limit !== undefined) terms.limit = limit;
    // The lease's own set, not a copy: a write still in flight (a renewal made again on a newer
    // record after the loss) adds its id there, and settling runs once the writes are done.
    const contender: Contender = { lockId: this.lease.lockId, terms, writeIds: this.lease.writeIds };
    if (this.lease.handedTo) contender.handedTo = this.lease.handedTo;
    return contender;
  }

  private async finishRelease(data: { value: unknown } | undefined, retry: boolean): Promise<void> {
    const keeper = this.keeper;
    keeper.checkDeadline();
    if (this.state === 'lost') throw this.lostError!;
    if (!retry) this.forgetEarlierCalls();
    if (this.state === 'released') {
      // Another release (close(), a release by handle) got there first, without this data.
      if (data) throw new LockNotHeldError(this.key, 'it was already released; the data was not stored');
      return;
    }
    this.state = 'releasing';
    keeper.stop();
    const holdMs = this.remainingMinimumHoldMs();
    if (holdMs > 0) keeper.lowerDeadline(lossDeadline(this.time.monotonic(), holdMs, 0));
    keeper.writesInFlight++;
    try {
      if (holdMs > 0) {
        // lockAtLeastMs: instead of freeing, shorten the lease to end at the minimum hold
        // and stop renewing; it then expires by itself (a late cron on another replica finds it held).
        await this.host.engine.renew(this.lease, holdMs, data);
        // The hold ran out first (the lock is lost) and the shortening landed anyway, made again
        // on a newer record after a lost request: like a renewal landing after the loss, it is
        // given back once the writes are done (markLost's settling), not left to run out.
        if ((this.state as LockState) === 'lost') keeper.landedAfterLoss = true;
      } else {
        await this.host.releaseLease(this as Lock<unknown>, data);
      }
      keeper.unsure = false;
      this.pendingRelease = undefined;
      this.markReleased();
    } catch (error) {
      if (error instanceof LockLostError) {
        this.markLost(error);
      } else if (this.state === 'releasing') {
        if (isUnknownOutcome(error)) {
          // The store may now hold a free record or the shortened lease (the deadline already
          // counts it): the release is retried until that is settled.
          keeper.unsure = true;
        } else if (!keeper.unsure) {
          this.state = 'held'; // certainly not applied, nor an earlier attempt: still ours, and we know it
        }
        // Keep the lease renewed, and retry the release in the background so a caller that
        // cannot wait (a finished HTTP response, withLock after a throw) leaks nothing.
        this.pendingRelease = { data };
        keeper.arm();
        this.scheduleReleaseRetry();
      } else if (holdMs > 0 && isUnknownOutcome(error)) {
        // Lost while the shortening was on its way, and it may still land: settled as above.
        keeper.unsure = true;
      }
      throw error;
    } finally {
      keeper.writesInFlight--;
    }
  }

  private get time(): Scheduler {
    return this.host.engine.clock.time;
  }

  private remainingMinimumHoldMs(): number {
    const { lockAtLeastMs } = this.settings;
    if (!lockAtLeastMs) return 0;
    const elapsed = this.time.monotonic() - this.acquiredAtMonotonic;
    return Math.max(0, lockAtLeastMs - elapsed);
  }

  /**
   * Serialises writes to the record (renewals, updates) so each names the latest version.
   * `send` gets the lease the write asks for, read when the write runs (an `extend` queued
   * before it may have changed it); the keeper counts the deadline from it.
   */
  private write(
    send: (leaseMs: number) => Promise<void>,
    options: { leaseMs?: number; background?: boolean } = {},
  ): Promise<void> {
    const run = async () => {
      this.keeper.checkDeadline();
      if (this.state === 'lost') throw this.lostError!;
      if (this.state === 'released') throw new LockNotHeldError(this.key, 'it was already released');
      if (this.state === 'releasing' && !options.background) {
        throw new LockNotHeldError(this.key, 'it is being released (a release is being retried)');
      }
      if (!options.background) this.forgetEarlierCalls();
      const leaseMs = options.leaseMs ?? this.settings.leaseMs;
      await this.keeper.write(leaseMs, () => send(leaseMs));
    };
    return this.afterWrites(run);
  }

  /** Runs `operation` once every write queued before it has settled, whatever their outcome. */
  private afterWrites(operation: () => Promise<void>): Promise<void> {
    const result = this.writes.then(operation, operation);
    this.writes = result.catch(() => undefined);
    return result;
  }

  /**
   * A call from user code starts with no memory of the data earlier calls' writes of unknown
   * outcome carried (a semaphore's slot writes skip storing data such an attempt may have
   * stored already): the caller asks for its data to be stored now, over whatever another
   * holder wrote since. Only the background retry of the same release keeps that memory.
   */
  private forgetEarlierCalls(): void {
    this.lease.slotData = undefined;
  }

  /** The keeper's heartbeat: a renewal in the order of writes, or, while a release is pending, another try at it. */
  private heartbeat(): Promise<void> | undefined {
    if (this.state === 'releasing' && this.pendingRelease) {
      // A release of unknown outcome may have landed (the record free, or handed over): a
      // renewal would find it and call the lock lost. Retrying the release settles it instead.
      void this.host.track(this.retryRelease());
      return undefined;
    }
    if (this.state !== 'held' && this.state !== 'releasing') return undefined;
    return this.write((leaseMs) => this.host.engine.renew(this.lease, leaseMs), { background: true });
  }

  /** Stops everything this lock does in the background: renewing, watching for loss, retrying a release. */
  private clearTimers(): void {
    this.keeper.stop();
    this.releaseRetryTimer?.cancel();
    this.releaseRetryTimer = undefined;
  }

  /**
   * Retries a failed release with growing pauses until it lands or the lease is lost; never
   * keeps the process alive. Once the client is closing, close() waits for the retries.
   */
  private scheduleReleaseRetry(): void {
    const delay = Math.min(RELEASE_RETRY_LONGEST_MS, RELEASE_RETRY_FIRST_MS * 2 ** this.releaseRetries++);
    this.releaseRetryTimer = this.time.setTimer(() => {
      this.releaseRetryTimer = undefined;
      void this.host.track(this.retryRelease());
    }, delay);
  }

  /** @internal One more attempt at a release that failed; close() calls it for locks still releasing. */
  async retryRelease(): Promise<void> {
    const pending = this.pendingRelease;
    if (!pending) return;
    const options = pending.data ? { data: pending.data.value as T } : {};
    await this.releaseAs(options, true).catch(() => undefined);
  }

  /** @internal True while a release failed and is being retried. */
  get releasePending(): boolean {
    return this.pendingRelease !== undefined && (this.state === 'held' || this.state === 'releasing');
  }

  private cancelReleaseRetry(): void {
    this.releaseRetryTimer?.cancel();
    this.releaseRetryTimer = undefined;
    this.pendingRelease = undefined;
  }
}

const RELEASE_RETRY_FIRST_MS = 100;
const RELEASE_RETRY_LONGEST_MS = 5_000;
