import { holderToken, type LockRecord } from '../../contract/lock-record.js';
import { deferred } from '../../shared/deferred.js';
import { isUnknownOutcome, LockLostError, LockStoreError } from '../../shared/errors.js';
import { backoffMs } from '../../shared/retry.js';
import { sleep } from '../../shared/sleep.js';
import {
  type Contender,
  type LeaseRequest,
  type LeaseState,
  newContender,
  settleWith,
} from '../lease-engine.js';
import type { AttemptResult, LeaseEnd, LeaseWatcher, StoreLease } from '../store-lease.js';
import { arrivedInTime } from './lease-deadline.js';
import { type KeepingTerms, LeaseKeeper } from './lease-keeper.js';
import type { ListLeaseOps } from './list-lease-ops.js';

/**
 * The store lease of the S3 list strategy: one acquisition, claimed by its engine (a contender
 * object and a listing), kept by a LeaseKeeper (heartbeats, the loss deadline, watching a lease
 * nothing renews), released by deleting its objects. Without compare-and-swap it passes nothing
 * on locally and hands nothing over; an acquisition nobody waits for is settled by the engine.
 */
export class ListLease implements StoreLease {
  readonly key: string;
  #phase: 'waiting' | 'held' | 'releasing' | 'ended' = 'waiting';
  #lease: LeaseState | undefined;
  #keeper: LeaseKeeper | undefined;
  #terms: KeepingTerms;
  readonly #contender: Contender;
  readonly #lost = new AbortController();
  readonly #ended = deferred<LeaseEnd>();
  readonly #acquired = deferred<number>();
  #watcher: LeaseWatcher | undefined;
  /** Every write of the lease, in order. */
  #writes: Promise<unknown> = Promise.resolve();
  /** A try under way. */
  #trying: Promise<AttemptResult> | undefined;
  /** forceReleases of this client for the key on their way, and a count of their starts and ends. */
  #forcing = 0;
  #forceEpoch = 0;

  constructor(
    private readonly engine: ListLeaseOps,
    request: LeaseRequest,
  ) {
    this.key = request.key;
    const { leaseMs, heartbeatMs, verifyMs, context } = request;
    this.#terms = { leaseMs, heartbeatMs, verifyMs };
    this.#contender = newContender(request.lockId, { leaseMs, context });
    this.#acquired.promise.catch(() => undefined);
  }

  get lockId(): string {
    return this.#lease?.lockId ?? this.#contender.lockId;
  }

  get signal(): AbortSignal {
    return this.#lost.signal;
  }

  get ended(): Promise<LeaseEnd> {
    return this.#ended.promise;
  }

  get acquired(): Promise<number> {
    return this.#acquired.promise;
  }

  get isOver(): boolean {
    return this.#phase === 'ended';
  }

  get heldToken(): number | undefined {
    return this.#phase === 'held' && this.#lease ? holderToken(this.#lease.record) : undefined;
  }

  get record(): LockRecord | undefined {
    return this.#lease?.record;
  }

  wrote(writeId: string): boolean {
    return this.#lease?.writeIds.has(writeId) ?? false;
  }

  watch(watcher: LeaseWatcher | undefined): void {
    this.#watcher = watcher;
  }

  attempt(): Promise<AttemptResult> {
    this.#trying ??= this.#try().finally(() => {
      this.#trying = undefined;
    });
    return this.#trying;
  }

  async #try(): Promise<AttemptResult> {
    if (this.#phase === 'ended') throw new LockLostError(this.key, 'the acquisition ended');
    const token = this.heldToken;
    if (token !== undefined) return { token };
    const epoch = this.#forceEpoch;
    let result: Awaited<ReturnType<ListLeaseOps['claim']>>;
    try {
      result = await this.engine.claim(this.key, this.#contender);
    } catch (error) {
      if (isUnknownOutcome(error)) this.#contender.unsure = true;
      throw error;
    }
    if (!result.lease) return { held: result.current };
    const { lease } = result;
    const forced = this.#forcing > 0 || this.#forceEpoch !== epoch;
    const { leaseMs } = this.#terms;
    // Given up meanwhile, overlapped by a forceRelease here, or won too late to trust: given back.
    if (this.#phase !== 'waiting' || forced || !arrivedInTime(lease, leaseMs, this.engine.clock.time)) {
      settleWith(this.#contender, lease);
      if (this.#phase === 'waiting') this.#endWaiting(); // given up before: that ending settles it
      throw new LockLostError(this.key, 'the lease it won could not be trusted; it was given back');
    }
    this.#hold(lease);
    return { token: holderToken(lease.record) };
  }

  #hold(lease: LeaseState): void {
    this.#lease = lease;
    this.#phase = 'held';
    this.#keeper = new LeaseKeeper(
      {
        key: this.key,
        terms: () => this.#terms,
        keeping: () => this.#phase === 'held' || this.#phase === 'releasing',
        lost: () => this.#phase === 'ended',
        heartbeat: () =>
          this.#phase === 'held' ? this.#write(() => this.#renew(this.#terms.leaseMs)) : undefined,
        leaseOutcome: (report) => {
          if (report.outcome === 'lost') this.#lose(report.error);
          else if (report.outcome === 'renewed') this.#watcher?.renewed();
        },
      },
      lease,
      this.engine,
    );
    this.#keeper.arm();
    this.#acquired.resolve(holderToken(lease.record));
  }

  check(): void {
    this.#keeper?.checkDeadline();
  }

  extend(leaseMs: number | null, data?: unknown): Promise<void> {
    const ms = leaseMs ?? Number.POSITIVE_INFINITY;
    return this.#write(async () => {
      this.#mustHold();
      await this.#renew(ms, data);
      this.#terms = { ...this.#terms, leaseMs: ms };
    });
  }

  #renew(leaseMs: number, data?: unknown): Promise<void> {
    const lease = this.#lease!;
    const stored = data === undefined ? undefined : { value: data };
    return this.#keeper!.write(leaseMs, () => this.engine.renew(lease, leaseMs, stored));
  }

  #mustHold(): void {
    this.check();
    if (this.#phase !== 'held') throw new LockLostError(this.key, 'it was not held', { maybeApplied: false });
  }

  release(data?: unknown, holdMs?: number): Promise<void> {
    return this.#write(async () => {
      this.#mustHold();
      this.#phase = 'releasing';
      const keeper = this.#keeper!;
      try {
        if (holdMs !== undefined) {
          // The lease is shortened to run out by itself; nothing renews it from now on.
          keeper.stop();
          await this.#renew(holdMs, data);
        } else {
          const stored = data === undefined ? undefined : { value: data };
          await this.engine.release(this.#lease!, stored);
        }
      } catch (error) {
        if (error instanceof LockLostError) this.#lose(error);
        else if (isUnknownOutcome(error)) this.#settleInBackground();
        else {
          this.#phase = 'held'; // certainly not applied: still held
          keeper.arm();
        }
        throw error;
      }
      this.#end('released');
    });
  }

  /** A release of unknown outcome: tried again until it is certain, then the lease ends. */
  #settleInBackground(): void {
    void (async () => {
      for (let attempt = 0; this.#phase === 'releasing'; attempt++) {
        const time = this.engine.clock.time;
        await sleep(time, backoffMs(this.engine.retry, Math.min(attempt, 8), time.random));
        try {
          await this.engine.release(this.#lease!);
          this.#end('released');
        } catch (error) {
          if (error instanceof LockLostError) this.#lose(error);
        }
      }
    })();
  }

  readonly handsOver = false;

  handOver(): Promise<void> {
    return Promise.reject(
      new LockStoreError('The S3 list strategy cannot hand a lease over.', { retryable: false }),
    );
  }

  passLocally(): undefined {
    return undefined;
  }

  giveUp(): void {
    if (this.#phase === 'waiting') {
      this.#endWaiting();
      return;
    }
    if (this.#phase === 'held') this.release().catch(() => undefined);
  }

  /** Nobody waits any more: a try still on its way, or one of unknown outcome, is settled by the engine. */
  #endWaiting(): void {
    this.#phase = 'ended';
    this.#acquired.reject(new LockLostError(this.key, 'the acquisition ended'));
    const trying = this.#trying;
    void (async () => {
      await trying?.catch(() => undefined);
      // Only a claim of unknown outcome, or a lease won and not trusted, leaves anything behind.
      const contender = this.#contender;
      if (contender.unsure || (contender.settlingWriteIds?.size ?? 0) > 0) await this.#settle();
      this.#ended.resolve('gaveUp');
    })();
  }

  /** Makes sure the acquisition does not keep the key (an unsure claim, or a lease nobody took). */
  async #settle(): Promise<void> {
    const time = this.engine.clock.time;
    for (let attempt = 0; attempt < SETTLE_ATTEMPTS; attempt++) {
      try {
        await this.engine.settleAbandoned(this.key, this.#contender);
        return;
      } catch (error) {
        if (!(error instanceof LockStoreError && error.retryable)) return;
        await sleep(time, backoffMs(this.engine.retry, Math.min(attempt, 8), time.random));
      }
    }
  }

  forceReleasing(): { end(): void } {
    this.#forcing++;
    this.#forceEpoch++;
    if (this.#phase === 'held' || this.#phase === 'releasing') {
      this.#lose(new LockLostError(this.key, 'a forceRelease in this client freed it'));
    }
    let ended = false;
    return {
      end: () => {
        if (ended) return;
        ended = true;
        this.#forcing--;
        this.#forceEpoch++;
      },
    };
  }

  #lose(error: LockLostError): void {
    if (this.#phase === 'ended') return;
    this.#phase = 'ended';
    this.#keeper?.stop();
    this.#lost.abort(error);
    this.#watcher?.lost(error);
    const keeper = this.#keeper;
    const lease = this.#lease;
    void (async () => {
      // A write of it still on its way (or of unknown outcome) may land: settled once answered.
      if (keeper && lease && (keeper.writesInFlight > 0 || keeper.unsure)) {
        await this.#writes.catch(() => undefined);
        if (keeper.unsure || keeper.landedAfterLoss) {
          settleWith(this.#contender, lease);
          await this.#settle();
        }
      }
      if (lease) this.engine.leaseEnded(lease);
      this.#ended.resolve('lost');
      this.#watcher?.ended('lost');
    })();
  }

  #end(end: LeaseEnd): void {
    if (this.#phase === 'ended') return;
    this.#phase = 'ended';
    this.#keeper?.stop();
    if (this.#lease) this.engine.leaseEnded(this.#lease);
    this.#ended.resolve(end);
    this.#watcher?.ended(end);
  }

  /** Runs `write` once every write before it has settled. */
  #write(write: () => Promise<void>): Promise<void> {
    const result = this.#writes.then(write, write);
    this.#writes = result.catch(() => undefined);
    return result;
  }
}

/** How often an acquisition nobody waits for is tried to be settled before it is left to run out. */
const SETTLE_ATTEMPTS = 8;
