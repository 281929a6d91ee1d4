// Longer than ~300 lines on purpose: Lock is the handle callers hold (key, token, signal, data,
// extend, update, release, `await using`) with its documentation. The lease under it (renewals,
// deadlines, writes of unknown outcome) is its StoreLease's; Lock keeps the caller's view of it
// (held, releasing, released, lost), its events, and the background retry of a refused release.
import type { LockRecord } from '../contract/lock-record.js';
import { holdersOf } from '../engine/cas/slot-records.js';
import type { LeaseEngine } from '../engine/lease-engine.js';
import type { StoreLease } from '../engine/store-lease.js';
import { isUnknownOutcome, LockConfigError, LockLostError, LockNotHeldError } from '../shared/errors.js';
import type { LockEventReport } from '../shared/lock-events.js';
import { checkOptionKeys } from '../shared/option-keys.js';
import type { ScheduledTimer, Scheduler } from '../shared/scheduler.js';
import { checkLease, describe } from '../shared/validation.js';
import type { LockStart } from '../waiting/queue-host.js';
import { encodeHandle } from './handle.js';

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
  /** Throws LockConfigError when `data` is not plain JSON or makes `record` too large. */
  checkData(data: unknown, record: LockRecord | undefined): void;
  /** Frees the lease, or hands it straight to a local waiter. */
  releaseLease(lock: Lock<unknown>, data?: { value: unknown }): Promise<void>;
  /** Called once when the lock ends (released or lost) so local waiters can move on. */
  lockEnded(lock: Lock<unknown>): void;
  /** Passes an event to the client's `onEvent` listener, stamping owner and time. */
  report(event: LockEventReport): void;
  /** Keeps `work` in the client's background work, which close() waits for. */
  track<R>(work: Promise<R>): Promise<R>;
}

/** How a lock keeps its lease: read at each use (`extend` changes it). */
export interface LockSettings {
  /** Lease length; Infinity: fail-closed. */
  leaseMs: number;
  /** Renewal interval, or false for none. */
  heartbeatMs: number | false;
  /** For leases nothing renews: how often to read the record to learn it was taken away. */
  verifyMs: number;
  onLost?: ((error: LockLostError) => void) | undefined;
  /** Keep the lock held until at least this long after acquiring, even if released sooner. */
  lockAtLeastMs?: number | undefined;
  /** The caller's context, stored with its lease. */
  context?: string | undefined;
}

/**
 * - held: ours, and we can be sure of it.
 * - releasing: the caller asked to release and the outcome is not known yet (the lease settles
 *   it in the background); no longer "held" for the caller.
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
  /** Its release failed and is being retried or settled in the background. */
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
 * A held lock: the handle a caller holds. Its store lease renews itself in the background
 * (never keeping the process alive); `signal` aborts with a LockLostError as soon as this
 * holder can no longer be sure it holds it.
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
  /** A release the store refused, retried in the background with its data. */
  private refusedRelease: { data: { value: unknown } | undefined } | undefined;
  /** Every call of this lock, in order: each runs once the one before it was answered. */
  private calls: Promise<unknown> = Promise.resolve();
  private readonly acquiredAtMonotonic: number;
  private readonly ownContext: string | undefined;
  private readonly ownAcquiredAt: number;
  /** The handle was read (or the lock resumed from one): someone may release or resume it by handle. */
  private handleShared = false;
  /** Released by passing the lease to another caller of this client with no write. */
  private passedOn = false;

  /** @internal */
  constructor(
    private readonly host: LockHost,
    /** @internal The store lease this lock holds (shared with the locks it is passed on to). */
    readonly lease: StoreLease,
    start: LockStart,
    private settings: LockSettings,
    /** The lock of this client that passed `lease` on to this one without a write. */
    passedFrom?: Lock<unknown>,
  ) {
    this.key = lease.key;
    this.owner = start.owner;
    this.fencingToken = start.token;
    this.ownContext = start.context;
    this.ownAcquiredAt = start.acquiredAt;
    // lockAtLeastMs counts from now.
    this.acquiredAtMonotonic = this.time.monotonic();
    if (passedFrom) passedFrom.passedOn = true;
    this.watchLease();
  }

  /** Makes this lock the one its lease tells of renewals, loss and its end (a local pass moves that on). */
  private watchLease(): void {
    this.lease.watch({
      renewed: () => {
        if (this.state !== 'held') return;
        const { key, fencingToken, expiresAt } = this;
        this.host.report({ type: 'renewed', key, fencingToken, expiresAt });
      },
      lost: (error) => this.markLost(error),
      // A lock is never held on a lease that ended. A release of unknown outcome is settled by
      // the lease, and so is one the store refused that another try (close's) got through: its
      // end says how it went. A lease that ended with no release asked for is a loss.
      ended: (end) => {
        if (this.state === 'released' || this.state === 'lost') return;
        const releaseAsked = this.state === 'releasing' || this.refusedRelease !== undefined;
        if (end === 'lost' && releaseAsked) {
          this.markLost(new LockLostError(this.key, 'the record moved on before its release landed'));
        } else if (end === 'lost' || !releaseAsked) {
          this.markLost(new LockLostError(this.key, `its lease ended (${end})`));
        } else this.markReleased();
      },
    });
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
   * @internal Renews the lease now, in the order of this lock's calls: confirms the lock still
   * holds it (a LockLostError, and the lock is lost, when it was taken over elsewhere).
   */
  renewNow(): Promise<void> {
    return this.inOrder(() => this.lease.extend(storedLease(this.settings.leaseMs)));
  }

  /** @internal Marks the handle as known elsewhere (the lock was resumed from it). */
  shareHandle(): void {
    this.handleShared = true;
  }

  /**
   * @internal Whether this lock, being released, may pass its lease to a caller with `next`
   * terms without a write: its handle is nobody's and the lease is kept the same way (a finite
   * lease of the same length). The lease itself says whether it has time to spare.
   */
  canPassTo(next: LockSettings): boolean {
    const { leaseMs } = this.settings;
    if (this.state !== 'releasing' || this.handleShared) return false;
    return Number.isFinite(leaseMs) && next.leaseMs === leaseMs;
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
    return this.lease.record?.data as T | undefined;
  }

  /** Wall-clock end of the current lease (ms since epoch) as stored; null for fail-closed locks and on untrusted clocks. */
  get expiresAt(): number | null {
    const record = this.lease.record;
    const entry = record && holdersOf(record).find((holder) => holder.lockId === this.lease.lockId);
    return entry?.expiresAt ?? null;
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
    this.checkDeadline();
    return this.state === 'held';
  }

  /** Renews now for `ms` from now, and renews by `ms` from then on. */
  async extend(ms: number): Promise<void> {
    const leaseMs = checkLease('extend(ms)', ms);
    this.host.engine.checkLeaseMs(leaseMs);
    if (this.state === 'held') this.cancelReleaseRetry(); // using the lock again: its release is the caller's again
    await this.whileHeld(async () => {
      await this.lease.extend(storedLease(leaseMs));
      const wasFailClosed = !Number.isFinite(this.settings.leaseMs);
      // A fail-closed lock made finite is renewed from now on, at the default pace.
      const heartbeatMs = wasFailClosed && Number.isFinite(leaseMs) ? leaseMs / 3 : this.settings.heartbeatMs;
      this.settings = { ...this.settings, leaseMs, heartbeatMs };
    });
  }

  /** Stores `data` in the lock record without unlocking (also renews the lease). */
  async update(data: T): Promise<void> {
    this.checkDeadline();
    if (this.state === 'lost') throw this.lostError!; // a lost lock says so before anything else
    this.host.checkData(data, this.lease.record);
    if (this.state === 'held') this.cancelReleaseRetry(); // using the lock again: its release is the caller's again
    await this.whileHeld(() => this.lease.extend(storedLease(this.settings.leaseMs), data));
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

  /** A release: the caller's, or (`retry`) the background retry of one the store refused. */
  private async releaseAs(options: ReleaseOptions<T>, retry: boolean): Promise<void> {
    checkReleaseOptions('lock.release()', options);
    const withData = 'data' in options ? { value: options.data } : undefined;
    if (withData) this.host.checkData(withData.value, this.lease.record);
    this.checkDeadline();
    if (this.state === 'released') {
      // Nothing to free, but data must be stored or the call must throw.
      if (withData) throw new LockNotHeldError(this.key, 'it was already released; the data was not stored');
      return;
    }
    if (this.state === 'lost') throw this.lostError!;
    if (!retry) this.cancelReleaseRetry();
    await this.inOrder(() => this.finishRelease(withData));
  }

  /** @internal Frees a lock no caller ever got, ignoring lockAtLeastMs. */
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

  /** @internal Ends the lock as lost: aborts `signal`, calls onLost. Its lease gives back what it may still own. */
  markLost(error: LockLostError): void {
    if (this.state === 'released' || this.state === 'lost') return;
    this.state = 'lost';
    this.lostError = error;
    this.cancelReleaseRetry();
    this.abort.abort(error);
    this.host.report({ type: 'lost', key: this.key, fencingToken: this.fencingToken, error });
    try {
      this.settings.onLost?.(error);
    } catch {
      // a throwing hook must not break the client
    }
    this.host.lockEnded(this as Lock<unknown>);
  }

  /** @internal Ends the lock as released (by us, handed over, or passed on). */
  markReleased(): void {
    if (this.state === 'released' || this.state === 'lost') return;
    this.state = 'released';
    this.cancelReleaseRetry();
    this.host.report({ type: 'released', key: this.key, fencingToken: this.fencingToken });
    this.host.lockEnded(this as Lock<unknown>);
  }

  /** Past the lease's deadline (or after a suspend), the lease says so: this lock is then lost. */
  private checkDeadline(): void {
    if (this.state !== 'held' && this.state !== 'releasing') return;
    this.lease.check();
    // A lease that ended before this lock watched it (its end then told nobody) ends it too.
    if (this.lease.isOver && this.state === 'held') {
      this.markLost(new LockLostError(this.key, 'its lease ended before this lock could use it'));
    }
  }

  private async finishRelease(data: { value: unknown } | undefined): Promise<void> {
    this.checkDeadline();
    if (this.state === 'lost') throw this.lostError!;
    if (this.state === 'released') {
      // Another release (close(), a release by handle) got there first, without this data.
      if (data) throw new LockNotHeldError(this.key, 'it was already released; the data was not stored');
      return;
    }
    if (this.state === 'releasing' && !this.refusedRelease) {
      // Told before that its outcome was unknown: the lease settles it, looking at the store
      // now; this call joins that release with its data, or says it cannot (a hand-over).
      await this.lease.release(data?.value, undefined);
      return;
    }
    this.state = 'releasing';
    const holdMs = this.remainingMinimumHoldMs();
    try {
      if (holdMs > 0) {
        // lockAtLeastMs: instead of freeing, shorten the lease to end at the minimum hold and
        // stop renewing; it then expires by itself (a late cron on another replica finds it held).
        await this.lease.release(data?.value, holdMs);
      } else {
        await this.host.releaseLease(this as Lock<unknown>, data);
      }
      this.refusedRelease = undefined;
      this.markReleased();
    } catch (error) {
      if (error instanceof LockLostError) {
        this.markLost(error);
      } else if (this.state === 'releasing' && !isUnknownOutcome(error)) {
        // Certainly not applied: still ours, and we know it. Retried in the background so that
        // a caller that cannot wait (a finished HTTP response, withLock after a throw) leaks nothing.
        this.state = 'held';
        this.refusedRelease = { data };
        this.scheduleReleaseRetry();
      }
      // Unknown outcome: the lease settles it in the background; the lock ends when it does.
      throw error;
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

  /** Runs `call` (an extend, an update) in this lock's order of calls, once it is sure it still holds the lock. */
  private whileHeld(call: () => Promise<void>): Promise<void> {
    return this.inOrder(async () => {
      this.checkDeadline();
      if (this.state === 'lost') throw this.lostError!;
      if (this.state === 'released') throw new LockNotHeldError(this.key, 'it was already released');
      if (this.state === 'releasing') {
        throw new LockNotHeldError(this.key, 'it is being released (a release is being retried)');
      }
      await call();
    });
  }

  /** Runs `operation` once every call queued before it has settled, whatever their outcome. */
  private inOrder(operation: () => Promise<void>): Promise<void> {
    const result = this.calls.then(operation, operation);
    this.calls = result.catch(() => undefined);
    return result;
  }

  /**
   * Retries a refused release with growing pauses until it lands or the lease is lost; never
   * keeps the process alive. Once the client is closing, close() waits for the retries.
   */
  private scheduleReleaseRetry(): void {
    const delay = Math.min(RELEASE_RETRY_LONGEST_MS, RELEASE_RETRY_FIRST_MS * 2 ** this.releaseRetries++);
    this.releaseRetryTimer = this.time.setTimer(() => {
      this.releaseRetryTimer = undefined;
      void this.host.track(this.retryRelease());
    }, delay);
  }

  /**
   * @internal One more attempt at a release that failed; close() calls it for locks still
   * releasing. A release of unknown outcome is the lease's to settle: this makes it look now.
   */
  async retryRelease(): Promise<void> {
    const refused = this.refusedRelease;
    if (!refused) {
      // Joins the release under way, which looks at the store now: answered once it landed, or
      // once that look fails (then the lease goes on settling it).
      if (this.state === 'releasing') await this.lease.release().catch(() => undefined);
      return;
    }
    const options = refused.data ? { data: refused.data.value as T } : {};
    await this.releaseAs(options, true).catch(() => undefined);
  }

  /** @internal True while a release failed and is being retried or settled. */
  get releasePending(): boolean {
    if (this.state === 'held') return this.refusedRelease !== undefined;
    return this.state === 'releasing' && !this.lease.isOver;
  }

  private cancelReleaseRetry(): void {
    this.releaseRetryTimer?.cancel();
    this.releaseRetryTimer = undefined;
    this.refusedRelease = undefined;
  }
}

/** A lease length as the store lease takes it: null for fail-closed. */
export function storedLease(leaseMs: number): number | null {
  return Number.isFinite(leaseMs) ? leaseMs : null;
}

const RELEASE_RETRY_FIRST_MS = 100;
const RELEASE_RETRY_LONGEST_MS = 5_000;
