import type { Contender, LeaseEngine, LeaseState } from '../engine/lease-engine.js';
import {
  isUnknownOutcome,
  LockConfigError,
  LockError,
  LockLostError,
  LockNotHeldError,
  LockStoreError,
} from '../shared/errors.js';
import { checkOptionKeys } from '../shared/option-keys.js';
import type { ScheduledTimer, Scheduler } from '../shared/scheduler.js';
import { checkDuration, describe } from '../shared/validation.js';
import { encodeHandle } from './handle.js';
import type { LockEventReport } from './lock-events.js';

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

export interface LockSettings {
  leaseMs: number;
  /** Renewal interval, or false for none. */
  heartbeatMs: number | false;
  onLost?: ((error: LockLostError) => void) | undefined;
  /** Keep the lock held until at least this long after acquiring, even if released sooner. */
  lockAtLeastMs?: number | undefined;
  /**
   * For locks that are never renewed (fail-closed, or heartbeatMs: false): how often to read
   * the record, so that a lock taken away (forceRelease, release by handle) aborts its signal.
   */
  verifyMs: number;
}

/**
 * - held: ours, and we can be sure of it.
 * - releasing: the caller asked to release and the outcome is not known yet (the release is
 *   retried in the background); no longer "held" for the caller.
 * - released / lost: ended.
 */
type LockState = 'held' | 'releasing' | 'released' | 'lost';

/**
 * A held lock. Its lease is renewed in the background (never keeping the process alive);
 * `signal` aborts with a LockLostError as soon as this holder can no longer be sure it holds it.
 */
export class Lock<T = unknown> {
  readonly key: string;
  readonly owner: string;
  /** Increases on every acquisition of this key and never repeats: pass it to the resources you write. */
  readonly fencingToken: number;
  /** Lets another process or client release or resume this lock (`locks.release(key, handle)`, `locks.resume(handle)`). */
  readonly handle: string;

  private readonly abort = new AbortController();
  private state: LockState = 'held';
  private lostError: LockLostError | undefined;
  private heartbeatTimer: ScheduledTimer | undefined;
  private lossTimer: ScheduledTimer | undefined;
  private verifyTimer: ScheduledTimer | undefined;
  private releaseRetryTimer: ScheduledTimer | undefined;
  private releaseRetries = 0;
  private writes: Promise<unknown> = Promise.resolve();
  private renewFailures = 0;
  private readonly acquiredAtMonotonic: number;
  /**
   * Monotonic time from which this holder no longer trusts its lease. After a write of unknown
   * outcome it is the earlier of the deadlines the store may now hold.
   */
  private deadline: number;
  /** Writes sent and not yet answered. */
  private writesInFlight = 0;
  /** A write's outcome is unknown and no later write has settled it. */
  private unsure = false;

  /** @internal */
  constructor(
    private readonly host: LockHost,
    /** @internal */ readonly lease: LeaseState,
    private settings: LockSettings,
  ) {
    this.key = lease.key;
    this.owner = lease.record.holder!.owner;
    this.fencingToken = lease.record.token;
    this.handle = encodeHandle({
      key: this.key,
      lockId: lease.lockId,
      owner: this.owner,
      fencingToken: this.fencingToken,
    });
    this.acquiredAtMonotonic = lease.sentAt;
    this.deadline = lossDeadline(lease.sentAt, settings.leaseMs, 0);
    this.armTimers();
  }

  /**
   * Aborts (reason: LockLostError) when the lease is lost. Not aborted by a normal release.
   * Reading it past the lease's end marks the lock lost first: a process that was paused
   * learns it on its first look, before its timers run.
   */
  get signal(): AbortSignal {
    this.checkDeadline();
    return this.abort.signal;
  }

  /** JSON data stored in the lock record (kept across releases). */
  get data(): T | undefined {
    return this.lease.record.data as T | undefined;
  }

  /** Wall-clock end of the current lease (ms since epoch) as stored; null for fail-closed locks. */
  get expiresAt(): number | null {
    return this.lease.record.holder?.expiresAt ?? null;
  }

  /** Wall-clock time this acquisition began (ms since epoch), as stored. */
  get acquiredAt(): number {
    return this.lease.record.holder?.acquiredAt ?? 0;
  }

  /** The human-readable context stored with the lock. */
  get context(): string | undefined {
    return this.lease.record.holder?.context;
  }

  /** True until released or lost; checks the lease's end on every read, like `signal`. */
  get isHeld(): boolean {
    this.checkDeadline();
    return this.state === 'held';
  }

  /** Renews now for `ms` from now, and renews by `ms` from then on. */
  async extend(ms: number): Promise<void> {
    const leaseMs = checkDuration('extend(ms)', ms, { allowInfinity: true });
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
    this.checkDeadline();
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
  async release(options: ReleaseOptions<T> = {}): Promise<void> {
    checkReleaseOptions('lock.release()', options);
    const withData = 'data' in options ? { value: options.data } : undefined;
    if (withData) this.host.checkData(withData.value, this.lease);
    this.checkDeadline();
    if (this.state === 'released') {
      // Nothing to free, but data must be stored or the call must throw.
      if (withData) throw new LockNotHeldError(this.key, 'it was already released; the data was not stored');
      return;
    }
    if (this.state === 'lost') throw this.lostError!;
    this.cancelReleaseRetry();
    await this.afterWrites(() => this.finishRelease(withData));
  }

  /** `await using lock = await locks.acquire(...)`: releases at scope exit; a lost lock is not an error here (its signal already said so). */
  async [Symbol.asyncDispose](): Promise<void> {
    try {
      await this.release();
    } catch (error) {
      if (!(error instanceof LockLostError)) throw error;
    }
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
    // Lost by the clock while a write may still land (or may have landed): once every write
    // is answered, the client makes sure the record does not stay held by this lock.
    if (this.writesInFlight > 0 || this.unsure) {
      const writesDone = this.writes.then(() => this.unsure || this.landedAfterLoss);
      this.host.settleAbandoned(this.key, this.contender(), writesDone);
    }
  }

  /** @internal Ends the lock as released (by us or handed over). */
  markReleased(): void {
    if (this.state === 'released' || this.state === 'lost') return;
    this.state = 'released';
    this.clearTimers();
    this.host.report({ type: 'released', key: this.key, fencingToken: this.fencingToken });
    this.host.lockEnded(this as Lock<unknown>);
  }

  /** A write of this lock was stored after the lock was marked lost. */
  private landedAfterLoss = false;
  /** The release that failed and is being retried, with its data. */
  private pendingRelease: { data: { value: unknown } | undefined } | undefined;

  private contender(): Contender {
    return {
      lockId: this.lease.lockId,
      terms: { leaseMs: this.settings.leaseMs, context: this.context },
    };
  }

  /** Trusts the lease no longer than `deadline` (keeps the earlier of the two), re-arming the loss timer. */
  private lowerDeadline(deadline: number): void {
    if (deadline >= this.deadline) return;
    this.deadline = deadline;
    this.armLossTimer();
  }

  /**
   * Ends the lock at the deadline. Timers may fire a little early by the monotonic clock
   * (Node rounds to whole ms on a cached loop time): then it waits again for the remainder.
   */
  private armLossTimer(): void {
    this.lossTimer?.cancel();
    const remaining = this.deadline - this.time.monotonic();
    this.lossTimer = this.time.setTimer(
      () => {
        if (this.time.monotonic() < this.deadline) this.armLossTimer();
        else this.checkDeadline();
      },
      Math.min(Math.max(1, remaining), LONGEST_TIMER_MS),
    );
  }

  /** Past the deadline: the lease can no longer be trusted, whatever a timer would say later. */
  private checkDeadline(): void {
    if (this.state !== 'held' && this.state !== 'releasing') return;
    if (this.time.monotonic() < this.deadline) return;
    this.markLost(
      new LockLostError(
        this.key,
        'the lease ran out before a renewal could land (store unreachable, or the event loop was blocked)',
        { maybeApplied: this.unsure },
      ),
    );
  }

  private async finishRelease(data: { value: unknown } | undefined): Promise<void> {
    this.checkDeadline();
    if (this.state === 'lost') throw this.lostError!;
    if (this.state === 'released') {
      // Another release (close(), a release by handle) got there first, without this data.
      if (data) throw new LockNotHeldError(this.key, 'it was already released; the data was not stored');
      return;
    }
    this.state = 'releasing';
    this.clearLeaseTimers();
    const holdMs = this.remainingMinimumHoldMs();
    if (holdMs > 0) this.lowerDeadline(lossDeadline(this.time.monotonic(), holdMs, 0));
    this.writesInFlight++;
    try {
      if (holdMs > 0) {
        // lockAtLeastMs: instead of freeing, shorten the lease to end at the minimum hold
        // and stop renewing; it then expires by itself (a late cron on another replica finds it held).
        await this.host.engine.renew(this.lease, holdMs, data);
      } else {
        await this.host.releaseLease(this as Lock<unknown>, data);
      }
      this.unsure = false;
      this.pendingRelease = undefined;
      this.markReleased();
    } catch (error) {
      if (error instanceof LockLostError) {
        this.markLost(error);
      } else if (this.state === 'releasing') {
        if (isUnknownOutcome(error)) {
          // The store may now hold a free record or the shortened lease (the deadline already
          // counts it): the release is retried until that is settled.
          this.unsure = true;
        } else if (!this.unsure) {
          this.state = 'held'; // certainly not applied, nor an earlier attempt: still ours, and we know it
        }
        // Keep the lease renewed, and retry the release in the background so a caller that
        // cannot wait (a finished HTTP response, withLock after a throw) leaks nothing.
        this.pendingRelease = { data };
        this.armTimers();
        this.scheduleReleaseRetry();
      }
      throw error;
    } finally {
      this.writesInFlight--;
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
   * before it may have changed it): on success the deadline counts from its send; on an
   * unknown outcome the earlier of the old deadline and that one is kept.
   */
  private write(
    send: (leaseMs: number) => Promise<void>,
    options: { leaseMs?: number; background?: boolean } = {},
  ): Promise<void> {
    const run = async () => {
      this.checkDeadline();
      if (this.state === 'lost') throw this.lostError!;
      if (this.state === 'released') throw new LockNotHeldError(this.key, 'it was already released');
      if (this.state === 'releasing' && !options.background) {
        throw new LockNotHeldError(this.key, 'it is being released (a release is being retried)');
      }
      const leaseMs = options.leaseMs ?? this.settings.leaseMs;
      const started = this.time.monotonic();
      // From the send on the store may hold this lease: a shorter one counts at once.
      this.lowerDeadline(lossDeadline(started, leaseMs, 0));
      this.writesInFlight++;
      try {
        await send(leaseMs);
        if ((this.state as LockState) === 'lost') {
          this.landedAfterLoss = true;
          return;
        }
        this.unsure = false;
        this.renewFailures = 0;
        this.deadline = lossDeadline(this.lease.sentAt, leaseMs, this.time.monotonic() - started);
        this.armTimers();
        this.host.report({
          type: 'renewed',
          key: this.key,
          fencingToken: this.fencingToken,
          expiresAt: this.expiresAt,
        });
      } catch (error) {
        if (error instanceof LockLostError) this.markLost(error);
        else if (isUnknownOutcome(error)) {
          this.unsure = true;
          this.armTimers();
        }
        throw error;
      } finally {
        this.writesInFlight--;
      }
    };
    return this.afterWrites(run);
  }

  /** Runs `operation` once every write queued before it has settled, whatever their outcome. */
  private afterWrites(operation: () => Promise<void>): Promise<void> {
    const result = this.writes.then(operation, operation);
    this.writes = result.catch(() => undefined);
    return result;
  }

  /** (Re)starts the heartbeat, the loss timer and the ownership check from the current deadline. */
  private armTimers(): void {
    this.clearLeaseTimers();
    if (this.state !== 'held' && this.state !== 'releasing') return;
    const now = this.time.monotonic();
    if (now >= this.deadline) {
      this.checkDeadline();
      return;
    }
    const beat = this.heartbeatDelay(this.settings.leaseMs);
    if (beat === undefined) {
      // Nothing renews this lock: read the record now and then to learn if it was taken away.
      this.verifyTimer = this.time.setTimer(() => void this.verify(), this.settings.verifyMs);
    }
    if (!Number.isFinite(this.deadline)) return; // fail-closed: nothing expires
    this.armLossTimer();
    // A renewal must be able to land before the deadline; after a failure, none is tried in
    // the last few ms (the loss timer ends the lock), so a refusing store meets no tight loop.
    const delay = beat === undefined ? undefined : Math.min(beat, this.deadline - now - 1);
    if (delay !== undefined && (delay >= MIN_RETRY_MS || (this.renewFailures === 0 && delay >= 0))) {
      this.heartbeatTimer = this.time.setTimer(() => void this.heartbeat(), delay);
    }
  }

  private heartbeatDelay(leaseMs: number): number | undefined {
    const { heartbeatMs } = this.settings;
    if (heartbeatMs === false || !Number.isFinite(leaseMs)) return undefined;
    const interval = heartbeatMs < leaseMs ? heartbeatMs : leaseMs / 3;
    // After a failed renewal, retry sooner (but not in a tight loop).
    return this.renewFailures === 0 ? interval : Math.max(MIN_RETRY_MS, interval / 2 ** this.renewFailures);
  }

  private async heartbeat(): Promise<void> {
    // Woken up past the point where the lease can be trusted (a long pause): whatever a
    // renewal would find, the code that ran meanwhile was not protected.
    this.checkDeadline();
    if (this.state === 'releasing' && this.pendingRelease) {
      // A release of unknown outcome may have landed (the record free, or handed over): a
      // renewal would find it and call the lock lost. Retrying the release settles it instead.
      void this.host.track(this.retryRelease());
      return;
    }
    if (this.state !== 'held' && this.state !== 'releasing') return;
    try {
      await this.write((leaseMs) => this.host.engine.renew(this.lease, leaseMs), { background: true });
    } catch (error) {
      if (this.state !== 'held' && this.state !== 'releasing') return;
      // Store failures are retried until the loss deadline; anything else (a corrupted record) ends the lease now.
      if (
        error instanceof LockError &&
        !(error instanceof LockLostError) &&
        !(error instanceof LockStoreError)
      ) {
        this.markLost(new LockLostError(this.key, `renewal failed: ${error.message}`, { cause: error }));
        return;
      }
      this.renewFailures++;
      this.armTimers(); // the loss timer keeps the deadline; the heartbeat retries sooner
    }
  }

  /** Reads the record of a lock nothing renews; anything but our own lease there means it was taken away. */
  private async verify(): Promise<void> {
    if (this.state !== 'held' && this.state !== 'releasing') return;
    try {
      const current = await this.host.engine.read(this.key);
      const ours =
        current !== null && (this.lease.writeIds.has(current.record.writeId) || this.writesInFlight > 0);
      if (!ours && (this.state === 'held' || this.state === 'releasing')) {
        this.markLost(
          new LockLostError(
            this.key,
            current?.record.holder
              ? 'another acquisition holds it now (forceRelease or a release by handle freed it)'
              : 'it was freed by someone else (forceRelease or a release by handle)',
          ),
        );
        return;
      }
    } catch {
      // A failed read proves nothing either way: look again at the next interval.
    }
    this.armTimers();
  }

  /** Stops everything this lock does in the background: renewing, watching for loss, retrying a release. */
  private clearTimers(): void {
    this.clearLeaseTimers();
    this.releaseRetryTimer?.cancel();
    this.releaseRetryTimer = undefined;
  }

  /**
   * Stops renewing and watching for loss, to re-arm them. A pending release retry stays: a
   * renewal that lands meanwhile must not cancel it, or the lock would be renewed for ever.
   */
  private clearLeaseTimers(): void {
    this.heartbeatTimer?.cancel();
    this.lossTimer?.cancel();
    this.verifyTimer?.cancel();
    this.heartbeatTimer = undefined;
    this.lossTimer = undefined;
    this.verifyTimer = undefined;
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
    await this.release(options).catch(() => undefined);
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
/** setTimeout's longest delay (about 24.8 days); a longer one would fire at once. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;
/** Shortest pause before retrying a failed renewal. */
const MIN_RETRY_MS = 10;
const RELEASE_RETRY_LONGEST_MS = 5_000;

/**
 * Monotonic time from which a holder stops trusting a lease whose expiry was sent at `sentAt`:
 * the lease's end less a safety margin of a tenth of the lease (at most 2 s), or twice the last
 * write's duration, but never more than half the lease.
 */
function lossDeadline(sentAt: number, leaseMs: number, lastWriteMs: number): number {
  if (!Number.isFinite(leaseMs)) return Number.POSITIVE_INFINITY;
  const margin = Math.max(Math.min(leaseMs / 10, 2000), 2 * lastWriteMs);
  return sentAt + leaseMs - Math.min(margin, leaseMs / 2);
}

/**
 * False when a claim landed so late (a slow network, SDK retries) that the lease it won can no
 * longer be trusted: such a lease is never handed to a caller; the caller keeps waiting instead.
 * The same deadline a new Lock would arm its loss timer with.
 */
export function arrivedInTime(lease: LeaseState, leaseMs: number, now: number): boolean {
  if (!Number.isFinite(leaseMs)) return true;
  return now < lossDeadline(lease.sentAt, leaseMs, 0);
}
