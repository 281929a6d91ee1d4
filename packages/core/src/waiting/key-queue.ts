// Longer than ~300 lines on purpose: one object owns one key's state in a client (holder,
// waiters, poller, turn), and waiting, polling and hand-over all read and change that state;
// split apart, each piece would need the others' private fields.
import type { VersionedRecord } from '../contract/lock-record.js';
import { type AttemptResult, type StoreLease, stillHeld } from '../engine/store-lease.js';
import {
  type HolderSummary,
  LockError,
  LockLostError,
  LockStoreError,
  LockTimeoutError,
} from '../shared/errors.js';
import { backoffMs } from '../shared/retry.js';
import type { ScheduledTimer } from '../shared/scheduler.js';
import { FailureStreak } from './failure-streak.js';
import { LocalTurn } from './local-turn.js';
import { OtherTurn } from './other-turn.js';
import type { HeldLock, LockStart, QueueHost, Waiter } from './queue-host.js';

/**
 * Everything one client does about one key: the local holders (one for a lock, up to `limit`
 * for a semaphore), the local waiters (served in order), one poller shared by all of them (so
 * N local waiters cost one poll, not N), the hand-over from a local holder to the next local
 * waiter, and the client's current turn with the key (so other clients get the key too).
 * Each waiter has a store lease of its own, paced by the poller: one try per poll (`attempt`).
 */
export class KeyQueue<L extends HeldLock, S> {
  readonly waiters: Waiter<L, S>[] = [];
  readonly holders: L[] = [];
  private polling = false;
  /** Hand-overs to a local waiter on their way. */
  private handingOver = 0;
  /** Latest record seen by a claim, for timeout messages and `holderSummary`. */
  private lastSeen: VersionedRecord | null | undefined;
  /** The poller's last store failure, cleared by the next answer: the cause of a timeout. */
  private lastError: unknown;
  readonly turn: LocalTurn;
  /** When another client's turn should end: the poller looks then. */
  private readonly otherTurn: OtherTurn;
  private wakeUp: (() => void) | undefined;
  /** The poller's store failures in a row: waiters give up once they last `storeErrorWaitMs`. */
  private readonly failing = new FailureStreak();

  constructor(
    readonly key: string,
    private readonly host: QueueHost<L, S>,
    /** How many may hold the key at once: 1 for a lock. */
    readonly limit = 1,
  ) {
    const { localTurnMs, pollMs } = host.settings;
    const monotonic = () => host.engine.clock.time.monotonic();
    this.turn = new LocalTurn(localTurnMs, pollMs, monotonic);
    this.otherTurn = new OtherTurn(localTurnMs, monotonic);
  }

  private get time() {
    return this.host.engine.clock.time;
  }

  /** The first waiter still waiting, dropping those that gave up. */
  head(): Waiter<L, S> | undefined {
    while (this.waiters.length > 0 && this.waiters[0]!.settled) this.waiters.shift();
    return this.waiters[0];
  }

  private remove(waiter: Waiter<L, S>): void {
    const index = this.waiters.indexOf(waiter);
    if (index >= 0) this.waiters.splice(index, 1);
  }

  /** The first local holder (a lock's only one). */
  get holder(): L | null {
    return this.holders[0] ?? null;
  }

  /** Every slot this client can use is taken by a local holder. */
  get full(): boolean {
    return this.holders.length >= this.limit;
  }

  get idle(): boolean {
    return this.holders.length === 0 && this.head() === undefined && !this.polling && this.handingOver === 0;
  }

  /** Full or queued here: a claim by this client would only compete with its own. */
  get busy(): boolean {
    return this.full || this.head() !== undefined;
  }

  /** The local holder of the acquisition `lockId`, if any. */
  holding(lockId: string): L | undefined {
    return this.holders.find((holder) => holder.lease.lockId === lockId);
  }

  /** Sleeps up to `ms`, returning early when `wake()` is called. */
  private nap(ms: number): Promise<void> {
    return new Promise((resolve) => {
      // The poller serves waiting callers: its naps keep the process alive, as their waits do.
      const timer = this.time.setTimer(done, ms, { keepAlive: true });
      function done() {
        timer.cancel();
        resolve();
      }
      this.wakeUp = done;
    });
  }

  wake(): void {
    const wakeUp = this.wakeUp;
    this.wakeUp = undefined;
    wakeUp?.();
  }

  /**
   * A claim found the key held by someone else: remember the record, and this client's turn is
   * over, unless it still holds a slot of its own (a full semaphore: its turn goes on, so that
   * it still yields to other clients at the turn's end).
   */
  sawHeld(current: VersionedRecord | null): void {
    this.lastSeen = current;
    if (this.holders.length === 0) this.turn.otherHolds();
  }

  /** Rejects every waiter (the client is closing) and wakes the poller. */
  rejectAll(error: unknown): void {
    for (const waiter of [...this.waiters]) waiter.reject(error);
    this.wake();
  }

  /** Who holds the key, as far as this client knows: its own holder, or the last record a claim saw. */
  holderSummary(): HolderSummary | undefined {
    const own = this.holder;
    if (own) {
      const { owner, context, acquiredAt, expiresAt } = own;
      return { owner, context, acquiredAt, expiresAt };
    }
    const holder = this.lastSeen?.record.holder;
    if (!holder) return undefined;
    return {
      owner: holder.owner,
      context: holder.context,
      acquiredAt: holder.acquiredAt,
      expiresAt: holder.expiresAt,
    };
  }

  /** Queues a caller until it gets the lock, `waitMs` passes (LockTimeoutError) or `signal` aborts. */
  wait(
    request: { lease: StoreLease; settings: S },
    waitMs: number,
    signal: AbortSignal | undefined,
  ): Promise<L> {
    const key = this.key;
    return new Promise<L>((resolve, reject) => {
      let timer: ScheduledTimer | undefined;
      const onAbort = () =>
        settle(() => {
          this.host.report({
            type: 'contended',
            key,
            reason: 'aborted',
            holder: this.host.holderSummary(key),
          });
          reject(signal?.reason);
        });
      const settle = (finish: () => void, served = false) => {
        if (waiter.settled) return;
        waiter.settled = true;
        timer?.cancel();
        signal?.removeEventListener('abort', onAbort);
        this.remove(waiter);
        finish();
        // Nobody waits for its lease any more: whatever a try of it may still win is given back.
        if (!served) waiter.lease.giveUp();
        this.wake();
      };
      const waiter: Waiter<L, S> = {
        lease: request.lease,
        settings: request.settings,
        settled: false,
        resolve: (lock) => settle(() => resolve(lock), true),
        reject: (error) => settle(() => reject(error)),
      };
      if (Number.isFinite(waitMs)) {
        timer = this.time.setTimer(
          () =>
            settle(() => {
              const holder = this.host.holderSummary(key);
              this.host.report({ type: 'contended', key, reason: 'timeout', holder });
              // If the store kept failing, say so: the lock may not even be held.
              reject(
                new LockTimeoutError(key, waitMs, holder, {
                  cause: this.lastError,
                  limit: this.limit > 1 ? this.limit : undefined,
                }),
              );
            }),
          waitMs,
          { keepAlive: true },
        );
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      // Behind a local holder or other local waiters it is waiting already; otherwise the poller says so once its first try fails.
      if (this.full || this.waiters.length > 1) this.reportWaiting();
      this.ensurePolling();
    });
  }

  /** Puts a waiter back in front (a hand-over to it failed, or is still settling) and polls for it. */
  requeue(waiter: Waiter<L, S>): void {
    if (!this.waiters.includes(waiter)) this.waiters.unshift(waiter);
    this.ensurePolling();
  }

  ensurePolling(): void {
    if (this.polling) return;
    this.polling = true;
    void this.host.track(this.poll()).finally(() => {
      this.polling = false;
      if (this.head() && !this.full && !this.host.isClosing()) this.ensurePolling();
      else this.host.forget(this);
    });
  }

  /** The shared poller of the key: one try for the first local waiter, sleeping between tries. */
  private async poll(): Promise<void> {
    const { engine } = this.host;
    let attempt = 0;
    for (;;) {
      const head = this.head();
      if (!head) return;
      if (this.full) {
        // A local holder will hand over (or free a slot) on release; we also wake if it ends some other way.
        await this.nap(this.host.settings.pollMs);
        continue;
      }
      const stayAwayMs = this.turn.msToStayAway();
      if (stayAwayMs > 0) {
        // This client just ended its turn: other clients claim first.
        await this.nap(stayAwayMs);
        continue;
      }
      if (this.host.forcing(this.key)) {
        // A claim now would only win a lease to give back: wait for its answer (it wakes us).
        await this.nap(this.host.settings.pollMs);
        continue;
      }
      // Its lease ended without it (a forceRelease here met its try): it waits on with a new one.
      if (head.lease.isOver) head.lease = this.host.newLease(this.key, this.limit, head.settings);
      const { lease } = head;
      const sentAt = this.time.monotonic();
      let result: AttemptResult;
      try {
        const checking = engine.beforeClaim(this.key); // sent at once when nothing is left to check
        if (checking) await checking;
        result = await lease.attempt();
        if ('held' in result) engine.checkHeld(this.key, this.limit, result.held);
      } catch (error) {
        if (error instanceof LockLostError && lease.isOver) {
          // Ended meanwhile (see above): a new lease tries next, after a poll's pause, so that a
          // lease that keeps ending at once never spins the event loop.
          await this.nap(pollDelay(attempt++, this.host.settings.pollMs, this.time.random));
          continue;
        }
        const retryable =
          !(error instanceof LockError) || (error instanceof LockStoreError && error.retryable);
        const delay = backoffMs(engine.retry, Math.min(attempt++, 8), this.time.random);
        const { storeErrorWaitMs } = this.host.settings;
        const verdict = this.failing.failed(error, sentAt, this.time.monotonic(), storeErrorWaitMs);
        const givingUp = !retryable || verdict === 'too long';
        // Throttling is the store asking for patience: reported only when the waiters give up on it.
        if (verdict !== 'throttled' || givingUp) this.reportFailure(error, givingUp ? undefined : delay);
        if (givingUp) {
          for (const waiter of [...this.waiters]) waiter.reject(error);
          this.failing.clear();
          return;
        }
        this.lastError = error;
        await this.nap(delay);
        continue;
      }
      this.lastError = undefined;
      this.failing.clear();
      if ('token' in result) {
        attempt = 0;
        // The waiter may have gone (its lease then gives back what it won) or been served already.
        if (head.lease === lease && !head.settled) this.deliver(head, lease, result.token);
        continue;
      }
      this.sawHeld(result.held);
      this.reportWaiting();
      const untilClaimable = engine.msUntilClaimable(this.key, result.held);
      const holder = result.held?.record.holder;
      // A semaphore's holders come and go one by one: no turn to time.
      const turnEnd =
        holder && this.limit === 1 ? this.otherTurn.sawHolder(holder.lockId, sentAt) : undefined;
      if (turnEnd === 'ended') attempt = 0; // it may yield any moment now: poll briskly again
      let delay = pollDelay(attempt++, this.host.settings.pollMs, this.time.random);
      if (untilClaimable !== undefined) delay = Math.min(delay, untilClaimable + 1);
      if (typeof turnEnd === 'number') delay = Math.min(delay, turnEnd + 1);
      await this.nap(delay);
    }
  }

  /** Reports a failed try of the poller ('storeFailed'); throttling is the store's answer to load, not a failure. */
  private reportFailure(error: unknown, retryInMs: number | undefined): void {
    if (!this.host.reportsEvents()) return;
    const failures = this.failing.count;
    this.host.report({ type: 'storeFailed', key: this.key, error, failures, retryInMs });
  }

  /** Reports 'waiting' once for each local waiter not yet reported. */
  private reportWaiting(): void {
    if (!this.host.reportsEvents()) return;
    const holder = this.host.holderSummary(this.key);
    for (const waiter of this.waiters) {
      if (waiter.settled || waiter.reportedWaiting) continue;
      waiter.reportedWaiting = true;
      this.host.report({ type: 'waiting', key: this.key, holder });
    }
  }

  /**
   * Gives `lease`, held now with `token`, to `waiter`; a waiter that gave up (or a client
   * closing) has it given back instead. `previous`: the local lock that handed it over, or
   * (`passed`) passed its own lease on without a write.
   */
  deliver(waiter: Waiter<L, S>, lease: StoreLease, token: number, delivery: Delivery<L> = {}): void {
    if (this.host.isClosing() && !waiter.settled) waiter.reject(this.host.closedError());
    if (waiter.settled) {
      // No user code ran under it, so a minimum hold has nothing to protect: given back at once.
      lease.giveUp();
      delivery.previous?.markReleased();
      return;
    }
    if (!stillHeld(lease, token)) {
      // It ended before it reached the waiter: the waiter waits on, with a new lease (in the
      // key's current queue, should this one have been dropped meanwhile).
      delivery.previous?.markReleased();
      this.host.requeue(this.key, this.limit, waiter);
      return;
    }
    waiter.resolve(this.hold(lease, token, waiter.settings, delivery));
  }

  /** Makes the lock for a lease this client now holds with `token` (see Delivery). */
  hold(
    lease: StoreLease,
    token: number,
    settings: S,
    { previous, passed = false }: Delivery<L> = {},
    start?: LockStart,
  ): L {
    const lock = this.host.createLock(lease, token, settings, passed ? previous : undefined, start);
    this.holders.push(lock);
    this.turn.begin(lock.fencingToken); // a hand-off continues the running turn
    previous?.markReleased(); // before 'acquired', so events read in order
    this.host.report({
      type: 'acquired',
      key: lock.key,
      fencingToken: lock.fencingToken,
      expiresAt: lock.expiresAt,
      context: lock.context,
    });
    return lock;
  }

  /**
   * Frees the local holder's lease: straight to the next local waiter while this client's turn
   * lasts (with no write when the lease can be passed on as it is, otherwise one conditional
   * write, and never a poll delay), otherwise back to the store.
   */
  async release(lock: L, data?: { value: unknown }): Promise<void> {
    const { lease } = lock;
    this.otherTurn.knew(this.time.monotonic()); // nobody else held it up to now
    const next = this.head();
    if (next && this.turn.used) {
      // Local waiters had the key for a whole turn: give it back to the store, and keep our
      // poller away until other clients' pollers have had their chance to claim it.
      const sentAt = this.time.monotonic();
      await lease.release(data?.value);
      this.turn.yieldedAfter(this.time.monotonic() - sentAt, lease.record?.token ?? lock.fencingToken);
      return;
    }
    if (!next || this.limit > 1 || !lease.handsOver) {
      // The key's poller claims for the next local waiter once the lock ends. A semaphore's
      // slot is freed the same way: the poller takes it again at once.
      await lease.release(data?.value);
      return;
    }
    // Passed on with no write unless the release stores data (it resolves once the store has it).
    if (!data && this.host.canPass(lock, next)) {
      const token = lease.passLocally(this.host.leaseMsOf(next.settings), this.host.contextOf(next.settings));
      if (token !== undefined) {
        this.remove(next);
        next.lease.giveUp(); // its own lease never tried, or its try is given back
        next.lease = lease;
        this.deliver(next, lease, token, { previous: lock, passed: true });
        return;
      }
    }
    this.remove(next);
    // Not idle while the hand-over is on its way (the handing lock may end before its answer):
    // the waiter's lock goes into this queue, which the client must still know by then.
    this.handingOver++;
    try {
      await this.handOver(lock, next, data);
    } finally {
      this.handingOver--;
      this.host.forget(this);
    }
  }

  /** Hands `lock`'s lease to the waiter `next` with one write, and gives `next` its lock. */
  private async handOver(lock: L, next: Waiter<L, S>, data: { value: unknown } | undefined): Promise<void> {
    try {
      await lock.lease.handOver(next.lease, data?.value);
    } catch (error) {
      // A hand-over of unknown outcome settles in the background: if it landed, the waiter's
      // lease holds the key and its next try says so.
      if (this.host.isClosing() && !next.settled) next.reject(this.host.closedError());
      // The key's entry may have been dropped meanwhile: put the waiter into the current one.
      if (!next.settled) this.host.requeue(lock.key, this.limit, next);
      throw error;
    }
    const token = next.lease.heldToken;
    if (token !== undefined) {
      this.deliver(next, next.lease, token, { previous: lock });
      return;
    }
    // Landed too late for the waiter to trust as it stands: it renews first, on its next try.
    lock.markReleased();
    if (!next.settled) this.host.requeue(lock.key, this.limit, next);
  }

  /** The local holder ended (released or lost): local waiters move on. */
  lockEnded(lock: L): void {
    const index = this.holders.indexOf(lock);
    if (index < 0) return;
    this.holders.splice(index, 1);
    // Nobody here wants the key any more (a lock it was handed to still does: a hand-off keeps
    // the turn going). With waiters left, the turn goes on too: the poller claims for them at
    // once, as with the list strategy, which cannot hand over.
    if (!this.head() && this.holders.length === 0) this.turn.end();
    this.wake();
    if (this.head()) this.ensurePolling();
    this.host.forget(this);
  }
}

/** Where a lease being delivered came from (see KeyQueue.deliver). */
interface Delivery<L> {
  /** The local lock that handed it over. */
  previous?: L | undefined;
  /** That lock passed its own lease on without a write. */
  passed?: boolean;
}

/** Poll gaps grow from 20 ms to `maxMs`, with jitter so contenders do not poll in step. */
function pollDelay(attempt: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, 20 * 2 ** attempt);
  return Math.max(5, Math.round(ceiling * (0.5 + random() * 0.5)));
}
