import { isUnknownOutcome, LockError, LockLostError, LockStoreError } from '../../shared/errors.js';
import type { ScheduledTimer, Scheduler } from '../../shared/scheduler.js';
import type { LeaseState } from '../lease-engine.js';
import { lossDeadline } from './lease-deadline.js';
import type { ListLeaseOps } from './list-lease-ops.js';
import { SuspendCheck } from './suspend-check.js';

/** What the keeper learned about the lease: renewed (trusted anew), unknown (a write's outcome), lost. */
export type LeaseOutcome =
  | { outcome: 'renewed' }
  | { outcome: 'unknown' }
  | { outcome: 'lost'; error: LockLostError };

/** How often and for how long the kept lease is renewed; read at each use (`extend` changes it). */
export interface KeepingTerms {
  leaseMs: number;
  /** Renewal interval, or false for none. */
  heartbeatMs: number | false;
  /** For leases nothing renews: how often to read the record to learn it was taken away. */
  verifyMs: number;
}

/** What the keeper needs from the lock whose lease it keeps. */
export interface KeptLock {
  readonly key: string;
  terms(): KeepingTerms;
  /** True while the lease is still the lock's to keep (held, or a release not yet settled). */
  keeping(): boolean;
  /** True once the lock ended as lost. */
  lost(): boolean;
  /** The heartbeat's renewal, sent in the lock's order of writes; undefined when the lock has nothing to renew. */
  heartbeat(): Promise<void> | undefined;
  /** Each outcome, as it is learned. */
  leaseOutcome(outcome: LeaseOutcome): void;
}

/**
 * The keep-alive of one lock: renews its lease on a heartbeat, keeps the monotonic deadline
 * after which the lease is no longer trusted (and ends the lock there), retries failed
 * renewals sooner, and, for a lease nothing renews, reads the record now and then to learn
 * that it was taken away. Never keeps the process alive.
 */
export class LeaseKeeper {
  /**
   * Monotonic time from which the holder no longer trusts its lease. After a write of unknown
   * outcome it is the earlier of the deadlines the store may now hold.
   */
  private deadline: number;
  private heartbeatTimer: ScheduledTimer | undefined;
  private lossTimer: ScheduledTimer | undefined;
  private verifyTimer: ScheduledTimer | undefined;
  private renewFailures = 0;
  private readonly suspend = new SuspendCheck();
  /** Writes sent and not yet answered. */
  writesInFlight = 0;
  /** A write's outcome is unknown and no later write has settled it. */
  unsure = false;
  /** A write was stored after the lock was marked lost. */
  landedAfterLoss = false;

  constructor(
    private readonly lock: KeptLock,
    private readonly lease: LeaseState,
    private readonly engine: ListLeaseOps,
    /** Set when the lease comes from another lock of this client, which trusted it until then. */
    inheritedDeadline?: number,
  ) {
    this.deadline = inheritedDeadline ?? lossDeadline(lease.sentAt, lock.terms().leaseMs, 0);
  }

  /** Monotonic time from which the lease is no longer trusted. */
  get deadlineAt(): number {
    return this.deadline;
  }

  private get time(): Scheduler {
    return this.engine.clock.time;
  }

  /** Past the deadline: the lease can no longer be trusted, whatever a timer would say later. */
  checkDeadline(): void {
    if (!this.lock.keeping()) return;
    const now = this.time.monotonic();
    let why =
      'the lease ran out before a renewal could land (store unreachable, or the event loop was blocked)';
    if (now < this.deadline) {
      // Before the deadline by the monotonic clock, which a machine suspend stops.
      const suspected = this.suspend.suspected(this.lease, this.lock.terms().leaseMs, this.time.now(), now);
      if (suspected === undefined) return;
      why = suspected;
    }
    this.lock.leaseOutcome({
      outcome: 'lost',
      error: new LockLostError(this.lock.key, why, { maybeApplied: this.unsure, reason: 'expired' }),
    });
  }

  /** Trusts the lease no longer than `deadline` (keeps the earlier of the two), re-arming the loss timer. */
  lowerDeadline(deadline: number): void {
    if (deadline >= this.deadline) return;
    this.deadline = deadline;
    this.armLossTimer();
  }

  /**
   * Sends one write that sets the lease to `leaseMs` (a renewal, an update, an extend): from
   * the send on the store may hold that lease, so a shorter one counts at once; on success the
   * deadline counts from the send; on an unknown outcome the earlier deadline is kept; when the
   * store certainly refused it, the lease it holds is the one before, and so is the deadline.
   */
  async write(leaseMs: number, send: () => Promise<void>): Promise<void> {
    const started = this.time.monotonic();
    const before = this.deadline;
    this.lowerDeadline(lossDeadline(started, leaseMs, 0));
    this.writesInFlight++;
    try {
      await send();
      if (this.lock.lost()) {
        this.landedAfterLoss = true;
        return;
      }
      this.unsure = false;
      this.renewFailures = 0;
      this.deadline = lossDeadline(this.lease.sentAt, leaseMs, this.time.monotonic() - started);
      this.arm();
      this.lock.leaseOutcome({ outcome: 'renewed' });
    } catch (error) {
      if (error instanceof LockLostError) this.lock.leaseOutcome({ outcome: 'lost', error });
      else if (isUnknownOutcome(error)) {
        this.unsure = true;
        this.arm();
        this.lock.leaseOutcome({ outcome: 'unknown' });
      } else if (this.lock.keeping() && this.deadline < before) {
        // Certainly not stored (writes run one at a time, so nothing else lowered it meanwhile).
        this.deadline = before;
        this.arm();
      }
      throw error;
    } finally {
      this.writesInFlight--;
    }
  }

  /** (Re)starts the heartbeat, the loss timer and the ownership check from the current deadline. */
  arm(): void {
    this.stop();
    if (!this.lock.keeping()) return;
    const now = this.time.monotonic();
    if (now >= this.deadline) {
      this.checkDeadline();
      return;
    }
    const beat = this.heartbeatDelay();
    if (beat === undefined) {
      // Nothing renews this lock: read the record now and then to learn if it was taken away.
      // Counted from the lease's last confirmation, not from this lock's start: a lease passed
      // on from lock to lock faster than verifyMs is still checked on time.
      const confirmedAt = Math.max(this.lease.sentAt, this.lease.verifiedAt ?? Number.NEGATIVE_INFINITY);
      const verifyIn = Math.max(0, this.lock.terms().verifyMs - (now - confirmedAt));
      this.verifyTimer = this.time.setTimer(() => void this.verify(), verifyIn);
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

  /** Stops renewing and watching for loss (until armed again). */
  stop(): void {
    this.heartbeatTimer?.cancel();
    this.lossTimer?.cancel();
    this.verifyTimer?.cancel();
    this.heartbeatTimer = undefined;
    this.lossTimer = undefined;
    this.verifyTimer = undefined;
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

  private heartbeatDelay(): number | undefined {
    const { heartbeatMs, leaseMs } = this.lock.terms();
    if (heartbeatMs === false || !Number.isFinite(leaseMs)) return undefined;
    const interval = heartbeatMs < leaseMs ? heartbeatMs : leaseMs / 3;
    // After a failed renewal, retry sooner (but not in a tight loop).
    if (this.renewFailures > 0) return Math.max(MIN_RETRY_MS, interval / 2 ** this.renewFailures);
    // Counted from the lease's last write, not from this lock's start: a lease passed on from
    // lock to lock faster than the interval is still renewed on time.
    return Math.max(0, interval - (this.time.monotonic() - this.lease.sentAt));
  }

  private async heartbeat(): Promise<void> {
    // Woken up past the point where the lease can be trusted (a long pause): whatever a
    // renewal would find, the code that ran meanwhile was not protected.
    this.checkDeadline();
    const renewal = this.lock.heartbeat();
    if (!renewal) return;
    try {
      await renewal;
    } catch (error) {
      if (!this.lock.keeping()) return;
      // Store failures are retried until the loss deadline; anything else (a corrupted record) ends the lease now.
      if (
        error instanceof LockError &&
        !(error instanceof LockLostError) &&
        !(error instanceof LockStoreError)
      ) {
        const lost = new LockLostError(this.lock.key, `renewal failed: ${error.message}`, {
          cause: error,
          reason: 'failed',
        });
        this.lock.leaseOutcome({ outcome: 'lost', error: lost });
        return;
      }
      this.renewFailures++;
      this.arm(); // the loss timer keeps the deadline; the heartbeat retries sooner
    }
  }

  /** Reads the record of a lock nothing renews; anything but our own lease there means it was taken away. */
  private async verify(): Promise<void> {
    if (!this.lock.keeping()) return;
    try {
      const readAt = this.time.monotonic();
      const current = await this.engine.read(this.lock.key);
      const ours = this.engine.holds(this.lease, current) || (current !== null && this.writesInFlight > 0);
      if (!ours && this.lock.keeping()) {
        const error = new LockLostError(
          this.lock.key,
          current?.record.holder
            ? 'another acquisition holds it now (forceRelease or a release by handle freed it)'
            : 'it was freed by someone else (forceRelease or a release by handle)',
        );
        this.lock.leaseOutcome({ outcome: 'lost', error });
        return;
      }
      if (this.engine.holds(this.lease, current)) this.lease.verifiedAt = readAt;
    } catch {
      // A failed read proves nothing either way: look again at the next interval.
    }
    this.arm();
  }
}

/** setTimeout's longest delay (about 24.8 days); a longer one would fire at once. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;
/** Shortest pause before retrying a failed renewal. */
const MIN_RETRY_MS = 10;
