import type { Lock, LockInspection } from '../src/client/lock.js';
import type { LockRecord, SlotHolder } from '../src/contract/lock-record.js';
import { RESERVED_TOKENS } from '../src/engine/cas/local-pass.js';
import { holdersOf, isSemaphore, limitOf } from '../src/engine/cas/slot-records.js';
import { LockError, LockLostError, LockStoreError } from '../src/shared/errors.js';
import type { AppliedWrite } from './backend.js';
import { lockView } from './core-build.js';
import { FencedResource } from './fenced-resource.js';
import type { SimProcess } from './sim-scheduler.js';
import type { World } from './world.js';

/** What the checkers need to know about the client a lock lives in. */
export interface ClientInfo {
  process: SimProcess;
  pollMs: number;
}

/** How a Lock reached user code. */
export type HandedVia = 'acquire' | 'tryAcquire' | 'withLock' | 'acquireAll' | 'campaign' | 'resume';

/** A Lock object that core handed to user code, as the checkers track it. */
export interface HandedLock {
  seq: number;
  lock: Lock<unknown>;
  /**
   * The lock's signal, read once when handed. Core's getter checks the deadline (and may mark
   * the lock lost) on every read: the checkers look at the AbortSignal itself, so that looking
   * changes nothing; only `isHeld`, which user code reads too, is read through the getter.
   */
  signal: AbortSignal;
  lockId: string;
  key: string;
  token: number;
  client: ClientInfo;
  via: HandedVia;
  handedAt: number;
  /** Taken away on purpose (forceRelease, release by handle elsewhere, resumed elsewhere). */
  takenAwayAt: number | undefined;
  /** The process's paused time when it was taken away (pauses extend the abort bound). */
  pausedAtTakeAway: number;
  /** Taken away by a write that freed its lease: that write's process. */
  freedBy?: string | undefined;
  /** Longest finite lease this lock was given (0: fail-closed from the start). */
  leaseMs: number;
  /** Its heartbeat interval, or false. */
  heartbeatMs: number | false;
  /** Acquired with lockAtLeastMs: its release shortens the lease instead of freeing the lock. */
  lockAtLeast: boolean;
}

/** How a data write (update, release with data) ended, as the caller was told. */
export type DataOutcome = 'stored' | 'unknown' | 'not-applied';

export interface Violation {
  check: string;
  message: string;
  at: number;
}

export interface CheckerSettings {
  /** Exclusion and fencing-order checks hold in this run's clock regime. */
  exclusionChecked: boolean;
  /** How many may hold each key at once (1: a plain lock). */
  limits: Readonly<Record<string, number>>;
  requestTimeoutMs: number;
  /** Faults stop and the tight abort bounds apply from here. */
  quietFrom: number;
  /**
   * Violations matching this ("check: message") are counted, not reported, and the run goes
   * on: only to look past a known core bug while it is being fixed (`--ignore`).
   */
  ignore?: RegExp | undefined;
}

/**
 * Hand-outs of one kind (lock or semaphore slot) in a seed from which its exclusion check must
 * have seen a live holder of that kind at least once (see `finish`).
 */
const VACUITY_MIN_HAND_OUTS = 10;

/** Slack added to every bound: scheduling granularity, a request round trip, a retry. */
const MARGIN_MS = 1000;
/** Longest pause core's retry policy takes between two tries (the sim's clients: maxMs up to 2 s). */
const SETTLE_SLACK_MS = 2000;

/**
 * The invariants, checked as the run goes (the driver calls `afterStep` after every event;
 * the backend, the fenced resource and the workload report to the other hooks as things happen):
 * 1. exclusion: never more live holders of a key than its limit at one instant (a lock: one);
 * 2. fencing tokens never repeat; a lock's increase in hand-out order, any key's exceed every
 *    token handed out before the call began; a new lease or slot is stored above every token
 *    the key had, and the stored token never goes back;
 * 3. a write after an `isHeld` check is accepted by the fenced resource (a semaphore's: made
 *    while at most `limit` holders live);
 * 4. data: stored writes stay until replaced, nothing reappears, "not applied" never lands;
 * 5. locks taken away on purpose learn it within a bound, and a lease a lost lock wrote after
 *    its loss is given back (liveness checks live in the driver);
 * 6. only typed errors (the driver watches for unhandled rejections);
 * 7. limits: a stored record never names more holders than its limit, nor a limit other than
 *    the key's (the workload never mixes them except on purpose, and those calls must fail);
 *    a write that takes no slot changes one holder's entry at most, or frees the key;
 * 8. acquireAll: a returned set holds every key, by locks it took; after a throw, none of the
 *    locks it took is still held unless its release is being retried (and that ends in time).
 */
export class Checker {
  violation: Violation | undefined;
  checks = 0;
  /** Violations matched by `settings.ignore`. */
  ignored = 0;
  readonly resource = new FencedResource();
  /**
   * What the exclusion check had to look at, by kind of key (`lock`, `semaphore`): Locks handed
   * to user code, and live holders it counted after a step (one per holder per step).
   */
  readonly seen = { handed: { lock: 0, semaphore: 0 }, live: { lock: 0, semaphore: 0 } };
  private readonly live: HandedLock[] = [];
  /**
   * Handed locks by lock id. A stored lease is named by its lock id: a client passes it among
   * its own callers with no write (each Lock taking the next reserved token, the record showing
   * the holder of its last write), so one lease may have many Locks. A contender may also reuse
   * its lock id for a later lease: those Locks have tokens above every token the key had
   * stored, reservations included, so a lease's Locks are told apart by token range.
   */
  private readonly byLockId = new Map<string, HandedLock[]>();
  private seq = 0;
  private readonly holdersScratch: HandedLock[] = [];
  /** forceReleases the workload made, by process and key, with when each began and settled. */
  private readonly forceReleases: OwnForceRelease[] = [];
  /** Take-aways per lock id: the token range of the lease taken away, when, by which process's write. */
  private readonly takeAways = new Map<string, TakeAway[]>();
  /**
   * Coverage, for the summary: Locks handed with a token the store had not seen (passed on
   * with no write); leases whose Locks' tokens ran past the first block of tokens their first
   * write reserved; writes of a lease that raised its holder's token (a later local holder
   * written by a renewal, update or release); hand-overs written after the handing lock's
   * handle was read (it may never pass on without a write).
   */
  readonly coverage = {
    localPasses: 0,
    blockCrossings: 0,
    reserveUsedUp: 0,
    holderRaised: 0,
    handedOverAfterHandleRead: 0,
  };
  /** First stored holder token of each lease (lock id), and whether its Locks crossed a block yet. */
  private readonly leaseStart = new Map<string, { token: number; crossed: boolean }>();
  /** Highest token handed to a Lock of each lock id. */
  private readonly maxHandedOf = new Map<string, number>();
  /** Lock ids whose handle user code read while they were held. */
  private readonly handleReadIds = new Set<string>();
  /** Leases (core's own objects) of Locks whose handle user code read while they were held. */
  private readonly handleReadLeases = new WeakSet<object>();
  /** Highest token handed to user code per plain-lock key (acquisitions, not resumes). */
  private readonly lastHanded = new Map<string, number>();
  /** Highest token handed to user code per key, any way: what a call starting now must exceed. */
  private readonly handedMax = new Map<string, number>();
  /**
   * Who got each token of each key: its lock id and the hand-out (seq). One lease's Locks share
   * a lock id, each with its own token; a token is handed again only by a resume of that lock id.
   */
  private readonly tokenOwner = new Map<string, Map<number, { lockId: string; seq: number }>>();
  private readonly maxStoredToken = new Map<string, number>();
  /** Process that last wrote each lease (the claimer, then a resumer). */
  readonly leaseProcess = new Map<string, string>();
  /** Lock ids core handed to user code, in any Lock. */
  readonly handedLockIds = new Set<string>();
  readonly lockAtLeastIds = new Set<string>();
  /** What the store holds for each key now: a lock's holder, or a semaphore's holders. */
  private readonly stored = new Map<string, readonly SlotHolder[]>();
  // data
  private readonly dataNow = new Map<string, number>();
  private readonly replaced = new Map<string, Set<number>>();
  private readonly appliedData = new Set<number>();
  private readonly notApplied = new Set<number>();

  constructor(
    private readonly world: World,
    private readonly settings: CheckerSettings,
  ) {}

  fail(check: string, message: string): void {
    if (this.settings.ignore?.test(`${check}: ${message}`)) {
      this.ignored++;
      return;
    }
    this.violation ??= { check, message, at: this.world.now };
  }

  // ---- hand-outs and fencing -------------------------------------------------------------

  /** Core handed `lock` to user code. `resumeStartedAt` for locks from resume(). */
  handed(
    lock: Lock<unknown>,
    client: ClientInfo,
    via: HandedVia,
    options: {
      heartbeatMs: number | false;
      lockAtLeast: boolean;
      resumeStartedAt?: number;
      /** `tokenFloor(key)` when the call that acquired this lock began (not for resumes, campaigns). */
      startFloor?: number;
    },
  ): HandedLock {
    const view = lockView(lock);
    const lockId = view.lockId;
    const token = lock.fencingToken;
    const leaseMs = view.storedLeaseMs;
    const entry: HandedLock = {
      seq: this.seq++,
      lock,
      signal: lock.signal,
      lockId,
      key: lock.key,
      token,
      client,
      via,
      handedAt: this.world.now,
      takenAwayAt: undefined,
      pausedAtTakeAway: 0,
      leaseMs,
      heartbeatMs: options.heartbeatMs,
      lockAtLeast: options.lockAtLeast,
    };
    // Taken away before it even reached the caller (a forceRelease between the claim landing and
    // its answer, or a take-away before its client, passing the lease on, learned of it)?
    const earlier = (this.takeAways.get(lockId) ?? []).filter((t) => t.from <= token && token <= t.to);
    // A renewal by this client before the lock was handed is its own: the one a resume sends, or
    // the one a claim sends to fence a lease it adopted. Anything else (a release by handle, a
    // forceRelease, a resume elsewhere) took the lease away.
    const notOwn = (t: { freed: boolean; by: string }) => t.freed || t.by !== client.process.id;
    const takenBefore =
      via === 'resume'
        ? earlier.find((t) => t.at >= options.resumeStartedAt! && notOwn(t))
        : earlier.find(notOwn);
    if (takenBefore) {
      entry.takenAwayAt = takenBefore.at;
      // Paused as of the take-away: a pause (or suspend) between it and the hand-out counts too.
      entry.pausedAtTakeAway = client.process.pausedMs() - client.process.pausedMsSince(takenBefore.at);
      if (takenBefore.freed) entry.freedBy = takenBefore.by;
      this.checkOwnForceRelease(entry, takenBefore);
    }
    // A lock whose handle was read is handed on with a write (a new lease): a Lock sharing its
    // lease object got it by a local pass, which a release or resume by that handle would take
    // away from under it.
    if (via !== 'resume' && this.handleReadLeases.has(lock.lease)) {
      this.fail(
        'handle',
        `${lockId} (${client.process.id}, "${lock.key}", token ${token}) got by a local pass, with no write, the lease of a lock whose handle was read while it held`,
      );
    }
    this.handedLockIds.add(lockId);
    this.seen.handed[kindOf(this.limitOf(lock.key))]++;
    if (options.lockAtLeast) this.lockAtLeastIds.add(lockId);
    this.live.push(entry);
    const same = this.byLockId.get(lockId);
    if (same) same.push(entry);
    else this.byLockId.set(lockId, [entry]);
    this.countPass(entry);
    this.maxHandedOf.set(lockId, Math.max(this.maxHandedOf.get(lockId) ?? 0, token));

    this.checks++;
    const owners = this.tokenOwner.get(lock.key) ?? new Map<number, { lockId: string; seq: number }>();
    this.tokenOwner.set(lock.key, owners);
    const owner = owners.get(token);
    if (owner !== undefined && (owner.lockId !== lockId || via !== 'resume')) {
      this.fail(
        'fencing-token',
        `token ${token} of "${lock.key}" handed to ${lockId} (${client.process.id}, ${via}) was already handed to ${owner.lockId} (hand-out #${owner.seq})`,
      );
    }
    if (owner === undefined) owners.set(token, { lockId, seq: entry.seq });
    // Whatever the clocks: the claim was written after the call began, on a record that already
    // held every token handed out before, so its token is above all of them. Not for a Lock born
    // taken away: its client passed it, with no write, a lease taken away on purpose before it
    // could learn so, and a later lease may already have handed out higher tokens (a fenced
    // resource refuses its writes; the taken-away check bounds how long it believes it holds).
    // Nor, with clocks beyond the bound, for a Lock passed on with no write: an early takeover
    // took its lease away the same way, unseen until its client's next renewal (core README,
    // local passes).
    const passedOn = via !== 'resume' && this.passedWithNoWrite(lockId, token);
    if (
      options.startFloor !== undefined &&
      token <= options.startFloor &&
      entry.takenAwayAt === undefined &&
      !(passedOn && !this.settings.exclusionChecked)
    ) {
      this.fail(
        'fencing-token',
        `token ${token} of "${lock.key}" handed to ${lockId} (${client.process.id}, ${via}) is not above token ${options.startFloor}, handed out before this call began`,
      );
    }
    this.handedMax.set(lock.key, Math.max(this.handedMax.get(lock.key) ?? 0, token));
    // Hand-out order is token order only for a lock: a semaphore's concurrent claims may be
    // answered in either order.
    if (
      via !== 'resume' &&
      entry.takenAwayAt === undefined &&
      this.settings.exclusionChecked &&
      this.limitOf(lock.key) === 1
    ) {
      const last = this.lastHanded.get(lock.key) ?? 0;
      if (token <= last) {
        this.fail(
          'fencing-token',
          `token ${token} of "${lock.key}" handed to ${lockId} (${client.process.id}, ${via}) after token ${last} was handed out: tokens must increase in hand-out order`,
        );
      }
      this.lastHanded.set(lock.key, Math.max(last, token));
    }
    return entry;
  }

  /**
   * Coverage: a Lock handed with a token above its lease's stored holder's got the lease by a
   * local pass (no write since); one whose token is a reserved block or more above its lease's
   * first holder's crossed a block boundary.
   */
  private countPass(entry: HandedLock): void {
    if (entry.via === 'resume' || this.limitOf(entry.key) > 1) return;
    const stored = this.stored.get(entry.key)?.find((holder) => holder.lockId === entry.lockId);
    if (stored && stored.token < entry.token) this.coverage.localPasses++;
    const start = this.leaseStart.get(entry.lockId);
    if (start && !start.crossed && entry.token - start.token >= RESERVED_TOKENS) {
      start.crossed = true;
      this.coverage.blockCrossings++;
    }
  }

  /** Whether a Lock of `lockId` got `token` by a local pass: above the token its lease's first write stored. */
  private passedWithNoWrite(lockId: string, token: number): boolean {
    const start = this.leaseStart.get(lockId);
    return start !== undefined && start.token < token;
  }

  /** User code read `entry`'s handle (it may give it to another process). */
  handleRead(entry: HandedLock): void {
    if (!stillHeldState(entry.lock)) return;
    this.handleReadIds.add(entry.lockId);
    this.handleReadLeases.add(entry.lock.lease);
  }

  /** What a token of `key` handed out from now on must exceed (read when a call begins). */
  tokenFloor(key: string): number {
    return this.handedMax.get(key) ?? 0;
  }

  limitOf(key: string): number {
    return this.settings.limits[key] ?? 1;
  }

  /** The workload writes to the fenced resource right after `entry.lock.isHeld` returned true. */
  resourceWrite(entry: HandedLock): void {
    this.checks++;
    const limit = this.limitOf(entry.key);
    if (limit > 1) {
      if (entry.takenAwayAt !== undefined || !this.settings.exclusionChecked) return;
      const holders = this.liveHoldersOf(entry.key);
      if (this.resource.admit(holders.length, limit)) return;
      this.fail(
        'fenced-write',
        `${entry.client.process.id} wrote to "${entry.key}" (limit ${limit}) with token ${entry.token} right after isHeld said true, while ${holders.length} holders were live: ${holders.map(describeHolder).join('; ')}`,
      );
      return;
    }
    if (this.resource.write(entry.key, entry.token)) return;
    if (entry.takenAwayAt !== undefined || !this.settings.exclusionChecked) return;
    this.fail(
      'fenced-write',
      `${entry.client.process.id} wrote to "${entry.key}" with token ${entry.token} right after isHeld said true, and the resource refused it: token ${this.resource.highestOf(entry.key)} had written already (two live holders)`,
    );
  }

  extended(entry: HandedLock, ms: number): void {
    if (Number.isFinite(ms)) entry.leaseMs = Math.max(entry.leaseMs, ms);
  }

  // ---- acquireAll ------------------------------------------------------------------------

  /**
   * acquireAll(`wanted`) returned a set: it holds exactly the wanted keys, each by a lock this
   * call took, every one still held; any other lock the call took has ended.
   */
  setReturned(
    who: string,
    wanted: readonly string[],
    set: { keys: readonly string[]; locks: ReadonlyMap<string, Lock<unknown>>; isHeld: boolean },
    taken: readonly Lock<unknown>[],
  ): void {
    this.checks++;
    const call = `acquireAll(${wanted.join(', ')}) in ${who}`;
    const sorted = [...wanted].sort();
    if (set.keys.join('\n') !== sorted.join('\n') || set.locks.size !== sorted.length) {
      this.fail('lock-set', `${call} returned a set of ${set.keys.join(', ')}, not every key asked for`);
      return;
    }
    for (const key of sorted) {
      const lock = set.locks.get(key);
      if (!lock || lock.key !== key || !taken.includes(lock)) {
        this.fail('lock-set', `${call} returned a set whose lock of "${key}" is not one this call acquired`);
        return;
      }
    }
    if (!set.isHeld) {
      const lost = sorted.filter((key) => !set.locks.get(key)!.isHeld);
      this.fail('lock-set', `${call} returned a set that no longer holds ${lost.join(', ')}`);
    }
    for (const lock of taken) {
      if (set.locks.get(lock.key) !== lock && stillHeldState(lock) && !releasePending(lock)) {
        this.fail(
          'lock-set',
          `${call} returned, and still holds a lock of "${lock.key}" it took outside the set`,
        );
      }
    }
  }

  /**
   * acquireAll threw: every lock it took has ended, or is being released (its release failed
   * and is retried in the background; `orphanEndsBy` then bounds how long that may take).
   */
  setThrew(
    who: string,
    wanted: readonly string[],
    taken: readonly Lock<unknown>[],
    error: unknown,
  ): Lock<unknown>[] {
    this.checks++;
    const stillHeld = taken.filter((lock) => stillHeldState(lock) && !releasePending(lock));
    if (stillHeld.length > 0) {
      this.fail(
        'lock-set',
        `acquireAll(${wanted.join(', ')}) in ${who} threw ${error instanceof Error ? error.name : String(error)}, yet still holds ${stillHeld.map((lock) => `"${lock.key}" (token ${lock.fencingToken})`).join(', ')}: part of its keys`,
      );
    }
    return taken.filter((lock) => lockState(lock) === 'held' || lockState(lock) === 'releasing');
  }

  /**
   * A lock a failed acquireAll took and could not release at once must have ended (its release
   * retried until it lands, or its lease lost) by `deadline` plus the time its process spent
   * paused since `pausedAtStart`.
   */
  orphanEndsBy(lock: Lock<unknown>, who: string, client: ClientInfo, deadline: number): void {
    const pausedAtStart = client.process.pausedMs();
    const check = () => {
      if (client.process.crashed) return;
      const limit = deadline + client.process.pausedMs() - pausedAtStart;
      if (this.world.now < limit) {
        this.world.at(limit, check);
        return;
      }
      this.checks++;
      const state = lockState(lock);
      if (state !== 'held' && state !== 'releasing') return;
      this.fail(
        'lock-set',
        `a lock of "${lock.key}" (token ${lock.fencingToken}) that a failed acquireAll in ${who} took is still ${state} at ${this.world.now.toFixed(0)} ms, though its release has been retried since faults stopped`,
      );
    };
    this.world.at(deadline, check);
  }

  // ---- what the store applied ----------------------------------------------------------------

  applied(write: AppliedWrite): void {
    this.checks++;
    const { key, before, after } = write;
    // A lock's one holder, or a semaphore's holders, each with its token and last write id.
    const was = before ? holdersOf(before) : NO_HOLDERS;
    const now = after ? holdersOf(after) : NO_HOLDERS;
    // The highest token the key ever stored, reserved ones included (record.token).
    const maxToken = this.maxStoredToken.get(key) ?? 0;
    let added = false;
    if (after) {
      for (const holder of now) {
        if (holder.token > after.token) {
          this.fail(
            'fencing-token',
            `"${key}" was stored with holder ${holder.lockId} token ${holder.token} above the record's token ${after.token} (${write.op} by ${write.from})`,
          );
        }
        const old = was.find((h) => h.lockId === holder.lockId);
        if (old) {
          // The same lease: a later local holder's token may be written, never an earlier one.
          if (holder.token < old.token) {
            this.fail(
              'fencing-token',
              `the holder token of lease ${holder.lockId} of "${key}" went back from ${old.token} to ${holder.token} (${write.op} by ${write.from}): a stale holder was written`,
            );
          } else if (holder.token > old.token) this.coverage.holderRaised++;
          continue;
        }
        added = true;
        const previous = before && !isSemaphore(before) ? before.holder : null;
        if (
          previous &&
          this.handleReadIds.has(previous.lockId) &&
          this.leaseProcess.get(previous.lockId) === write.from
        )
          this.coverage.handedOverAfterHandleRead++;
        // A new lease after the previous one's Locks used up its reserved tokens (one was
        // handed the record's token): the next could only be handed on with a write.
        if (previous?.token !== undefined && this.maxHandedOf.get(previous.lockId) === before!.token)
          this.coverage.reserveUsedUp++;
        // A new lease (new lock id): its holder's own token is above every token the key
        // stored, those reserved for another lease's local passes included.
        if (holder.token <= maxToken) {
          this.fail(
            'fencing-token',
            `a new lease of "${key}" (${holder.lockId}, by ${write.from}) was stored with token ${holder.token}, not above the highest stored before (${maxToken})`,
          );
        }
        this.leaseProcess.set(holder.lockId, write.from);
        this.leaseStart.set(holder.lockId, { token: holder.token, crossed: false });
      }
      if (after.token < maxToken) {
        this.fail(
          'fencing-token',
          `the stored token of "${key}" went back from ${maxToken} to ${after.token} (${write.op} by ${write.from})`,
        );
      }
      this.maxStoredToken.set(key, Math.max(maxToken, after.token));
      if (now.length > 0) this.checkStoredLimit(write, now);
    }
    // Holders' entries this write removed or rewrote. Only a claim (which drops expired slots as
    // it adds its own) or a write that frees the key changes more than one.
    let changed = 0;
    for (const old of was) {
      const kept = now.find((holder) => holder.lockId === old.lockId);
      if (!kept || kept.writeId !== old.writeId) changed++;
    }
    const freedAll = now.length === 0;
    if (!added && !freedAll && changed > 1) {
      this.fail(
        'slot-write',
        `a write of "${key}" by ${write.from} that took no slot changed ${changed} holders' entries (before: ${describeRecord(before)}; after: ${describeRecord(after)}): it was not rebuilt on the record as it is`,
      );
    }
    for (const old of was) {
      // The lease's tokens: from its holder's as stored up to the record's (a plain lease's
      // reserved ones, which Locks it was passed to with no write since hold); a slot's own.
      const range = { from: old.token, to: before && !isSemaphore(before) ? before.token : old.token };
      const kept = now.find((holder) => holder.lockId === old.lockId);
      if (!kept) {
        // Gone in a write that took a new lease or slot: a takeover after it expired (the
        // exclusion check judges that). Gone, alone or with every other holder, in a write not
        // its own: taken away on purpose (a release by handle, forceRelease).
        const own = after !== null && this.isOwnWrite(old.lockId, after.writeId);
        if (!own && !added && (freedAll || changed === 1)) this.takeAway(old.lockId, range, write.from, true);
      } else if (kept.writeId !== old.writeId && !this.isOwnWrite(old.lockId, kept.writeId)) {
        // Renewed by a write none of its Locks sent: a resume in another client.
        this.takeAway(old.lockId, range, write.from, false);
        this.leaseProcess.set(old.lockId, write.from);
      }
    }
    this.stored.set(key, now);
    this.watchLateLandings(write, was, now);
    this.dataApplied(key, before, after, write.from);
  }

  /**
   * A write of a Lock that had already been marked lost, landing after the loss: its client must
   * give that lease back (settle it), not leave it to run out. Checked once faults have stopped:
   * by then the record must not hold the lease with that write any more.
   */
  private watchLateLandings(
    write: AppliedWrite,
    was: readonly SlotHolder[],
    now: readonly SlotHolder[],
  ): void {
    for (const holder of now) {
      const old = was.find((h) => h.lockId === holder.lockId);
      if (old?.writeId === holder.writeId) continue; // untouched by this write
      const lost = this.byLockId
        .get(holder.lockId)
        ?.find((entry) => lockState(entry.lock) === 'lost' && lockView(entry.lock).wrote(holder.writeId));
      if (!lost) continue;
      const landedAt = this.world.now;
      const process = lost.client.process;
      const pausedAtStart = process.pausedMs();
      const bound = 2 * this.settings.requestTimeoutMs + SETTLE_SLACK_MS + MARGIN_MS;
      const check = () => {
        if (process.crashed) return;
        const deadline =
          Math.max(landedAt, this.settings.quietFrom) + bound + process.pausedMs() - pausedAtStart;
        if (this.world.now < deadline) {
          this.world.at(deadline, check);
          return;
        }
        this.checks++;
        const kept = this.stored.get(write.key)?.find((h) => h.lockId === holder.lockId);
        if (kept?.writeId !== holder.writeId) return;
        this.fail(
          'lost-lease-kept',
          `${lost.lockId} (${process.id}, "${write.key}", token ${lost.token}) was marked lost, then a write of its own landed at ${landedAt.toFixed(0)} ms (${write.op}); at ${this.world.now.toFixed(0)} ms the record still holds that lease: a lease landing after the loss must be given back`,
        );
      };
      this.world.at(Math.max(landedAt, this.settings.quietFrom) + bound, check);
    }
  }

  /** A record with holders names the key's own limit, and no more holders than that. */
  private checkStoredLimit(write: AppliedWrite, holders: readonly SlotHolder[]): void {
    const stored = limitOf(write.after!);
    const limit = this.limitOf(write.key);
    if (stored !== limit) {
      this.fail(
        'limit-mismatch',
        `"${write.key}" (limit ${limit}) was stored held with limit ${stored} by ${holders.map((h) => `${h.lockId} token ${h.token}`).join(', ')} (${write.op} by ${write.from}; before: ${describeRecord(write.before)}): a call with another limit took it`,
      );
    }
    if (holders.length > stored) {
      this.fail(
        'slot-count',
        `"${write.key}" was stored with ${holders.length} holders, more than its limit ${stored} (${write.op} by ${write.from}): ${holders.map((h) => `${h.lockId} token ${h.token}`).join(', ')}`,
      );
    }
  }

  private isOwnWrite(lockId: string, writeId: string): boolean {
    const entries = this.byLockId.get(lockId);
    if (!entries) return false;
    for (const entry of entries) if (lockView(entry.lock).wrote(writeId)) return true;
    return false;
  }

  /**
   * The lease `lockId` was taken away on purpose: so is every Lock it was handed to (or is
   * handed to later, see `handed`) with a token in `range`. Those are the Locks its client
   * passed it to with no write before it learned: their tokens are at least the stored
   * holder's and at most the record's, below any later lease's. A Lock of that lock id outside
   * the range (an earlier one still thinking it holds) is not exempted.
   */
  private takeAway(lockId: string, range: { from: number; to: number }, by: string, freed: boolean): void {
    const list = this.takeAways.get(lockId) ?? [];
    list.push({ at: this.world.now, by, freed, ...range });
    this.takeAways.set(lockId, list);
    for (const entry of this.byLockId.get(lockId) ?? []) {
      if (entry.takenAwayAt !== undefined) continue;
      if (entry.token < range.from || entry.token > range.to) continue;
      if (!freed && entry.client.process.id === by) continue; // the resumer keeps it
      entry.takenAwayAt = this.world.now;
      entry.pausedAtTakeAway = entry.client.process.pausedMs();
      if (freed) entry.freedBy = by;
    }
  }

  // ---- forceRelease in a holder's own client ----------------------------------------------

  /** A forceRelease of `key` began in `process` (the workload calls it; it reports when it settled). */
  forceReleaseBegan(process: string, key: string): OwnForceRelease {
    const forcing: OwnForceRelease = { process, key, began: this.world.now, ended: undefined };
    this.forceReleases.push(forcing);
    return forcing;
  }

  /**
   * A forceRelease returned or threw. The core README: a forceRelease in the holder's own client
   * ends its locks at once, whatever its outcome: by now no Lock of that client whose lease a
   * write of that process freed meanwhile may still be held.
   */
  forceReleaseSettled(forcing: OwnForceRelease): void {
    forcing.ended = this.world.now;
    for (const entry of this.live) {
      if (entry.key !== forcing.key || entry.client.process.id !== forcing.process) continue;
      if (entry.client.process.crashed || entry.freedBy !== forcing.process) continue;
      if (entry.takenAwayAt === undefined || entry.takenAwayAt < forcing.began) continue;
      this.checks++;
      if (!stillHeldState(entry.lock)) continue;
      this.fail(
        'own-force-release',
        `${describeHolder(entry)} of "${entry.key}" is still held after the forceRelease its own client began at ${forcing.began.toFixed(0)} ms settled, though that freed its lease at ${entry.takenAwayAt.toFixed(0)} ms`,
      );
    }
  }

  /**
   * A Lock handed to user code, still held, whose lease a forceRelease of its own client freed
   * before it was handed: a claim (or a resume's renewal) of that client answered after the
   * forceRelease began must not become a live Lock.
   */
  private checkOwnForceRelease(entry: HandedLock, taken: TakeAway): void {
    const process = entry.client.process.id;
    if (!taken.freed || taken.by !== process) return;
    const during = this.forceReleases.some(
      (f) =>
        f.process === process &&
        f.key === entry.key &&
        f.began <= taken.at &&
        (f.ended === undefined || taken.at <= f.ended),
    );
    this.checks++;
    if (!during || !stillHeldState(entry.lock) || entry.signal.aborted) return;
    this.fail(
      'own-force-release',
      `${describeHolder(entry)} of "${entry.key}" was handed to user code held, though a forceRelease of its own client had freed its lease at ${taken.at.toFixed(0)} ms`,
    );
  }

  // ---- every step ------------------------------------------------------------------------

  afterStep(): void {
    const now = this.world.now;
    const holders = this.holdersScratch;
    holders.length = 0;
    let write = 0;
    for (let i = 0; i < this.live.length; i++) {
      const entry = this.live[i]!;
      const process = entry.client.process;
      // Released, lost, or in a process that died: nothing more to check.
      if (!stillHeldState(entry.lock) || process.crashed) continue;
      this.live[write++] = entry;
      if (entry.takenAwayAt !== undefined) {
        this.checks++;
        const deadline = this.abortDeadline(entry);
        if (!entry.signal.aborted && now > deadline) {
          this.fail(
            'taken-away-abort',
            `${entry.lockId} (${process.id}, "${entry.key}", token ${entry.token}) was taken away on purpose at ${entry.takenAwayAt.toFixed(0)} ms and its signal has not aborted ${Math.round(now - entry.takenAwayAt)} ms later (bound: ${Math.round(deadline - entry.takenAwayAt)} ms)`,
          );
        }
        continue;
      }
      if (!this.settings.exclusionChecked || process.paused) continue;
      this.checks++;
      if (!entry.lock.isHeld || entry.signal.aborted) continue;
      const limit = this.limitOf(entry.key);
      let same = 0;
      for (const other of holders) if (other.key === entry.key) same++;
      if (same >= limit) this.tooManyHolders(entry, holders, limit);
      holders.push(entry);
      this.seen.live[kindOf(limit)]++;
    }
    this.live.length = write;
  }

  /**
   * The run is over: a check that saw nothing checked nothing. Where the clocks let the
   * exclusion check run and user code got locks of a kind, it must have counted live holders of
   * that kind. A check whose view of lock state went blind (a field renamed under a cast, a
   * state never 'held') would otherwise pass every seed; this makes it fail the first one.
   */
  finish(): void {
    if (!this.settings.exclusionChecked) return;
    for (const kind of ['lock', 'semaphore'] as const) {
      if (this.seen.handed[kind] < VACUITY_MIN_HAND_OUTS) continue;
      this.checks++;
      if (this.seen.live[kind] > 0) continue;
      this.fail(
        'vacuous',
        `user code got ${this.seen.handed[kind]} ${kind === 'lock' ? 'locks' : 'semaphore slots'}, and the exclusion check never saw one of them live: it is looking at nothing`,
      );
    }
  }

  /**
   * A live holder: a Lock handed to user code whose own state is 'held', whose public `isHeld`
   * (which checks its deadline) is true and whose signal has not aborted, in a process neither
   * paused nor crashed, not taken away on purpose. Nothing here looks at fencing tokens.
   */
  private isLiveHolder(entry: HandedLock): boolean {
    const process = entry.client.process;
    if (!stillHeldState(entry.lock) || process.crashed || process.paused) return false;
    if (entry.takenAwayAt !== undefined) return false;
    return entry.lock.isHeld && !entry.signal.aborted;
  }

  /** The live holders of `key` now (see isLiveHolder). */
  liveHoldersOf(key: string): HandedLock[] {
    return this.live.filter((entry) => entry.key === key && this.isLiveHolder(entry));
  }

  private tooManyHolders(entry: HandedLock, holders: readonly HandedLock[], limit: number): void {
    const same = holders.filter((other) => other.key === entry.key);
    if (limit === 1) {
      const other = same[0]!;
      this.fail(
        'exclusion',
        `two live holders of "${entry.key}": ${describeHolder(other)} and ${describeHolder(entry)}, both isHeld with live signals`,
      );
      return;
    }
    this.fail(
      'exclusion',
      `${same.length + 1} live holders of "${entry.key}" (limit ${limit}): ${[...same, entry].map(describeHolder).join('; ')}, all isHeld with live signals`,
    );
  }

  /**
   * When a lock taken away on purpose must have aborted its signal:
   * - finite lease: by its own loss deadline at the latest (taken-away time + lease), and once
   *   faults stopped, within a heartbeat interval plus two request timeouts;
   * - fail-closed or no heartbeat: core verifies ownership every 5 × pollMs, so once faults
   *   stopped within that plus two request timeouts;
   * plus MARGIN_MS, plus any time the process spent paused since.
   */
  abortDeadline(entry: HandedLock): number {
    const takenAt = entry.takenAwayAt!;
    const paused = entry.client.process.pausedMs() - entry.pausedAtTakeAway;
    const quietStart = Math.max(takenAt, this.settings.quietFrom);
    const timeouts = 2 * this.settings.requestTimeoutMs;
    // The lock's settings as they are now: extend() may have turned a fail-closed lock into a
    // renewed one, or the other way round.
    const live = lockView(entry.lock);
    const failClosed = !Number.isFinite(live.leaseMs);
    const leaseMs = Math.max(entry.leaseMs, failClosed ? 0 : live.leaseMs);
    const heartbeatMs = live.heartbeatMs;
    let deadline = Number.POSITIVE_INFINITY;
    if (!failClosed) deadline = takenAt + leaseMs;
    if (heartbeatMs !== false && !failClosed) {
      deadline = Math.min(deadline, quietStart + heartbeatMs + timeouts);
    } else {
      deadline = Math.min(deadline, quietStart + 5 * entry.client.pollMs + timeouts);
    }
    return deadline + MARGIN_MS + paused;
  }

  /** Locks handed to user code that still think they hold their lease. */
  liveEntries(): readonly HandedLock[] {
    return this.live;
  }

  // ---- data ------------------------------------------------------------------------------

  private dataApplied(key: string, before: LockRecord | null, after: LockRecord | null, from: string): void {
    const previous = this.dataNow.get(key) ?? 0;
    const next = after ? dataId(after.data) : 0;
    if (after && next < 0) {
      this.fail('data', `"${key}" holds data no workload wrote: ${JSON.stringify(after.data)}`);
      return;
    }
    void before;
    if (next !== previous) {
      const replaced = this.replaced.get(key) ?? new Set<number>();
      this.replaced.set(key, replaced);
      if (next === 0 || replaced.has(next)) {
        this.fail(
          'data',
          `silent revert: "${key}" went from data w=${previous} back to ${next === 0 ? 'no data' : `w=${next}`} (write by ${from})`,
        );
      } else if (this.notApplied.has(next)) {
        this.fail('data', `data w=${next} of "${key}" was reported as not applied, and has now landed`);
      }
      replaced.add(previous);
      this.dataNow.set(key, next);
    }
    if (next > 0) this.appliedData.add(next);
  }

  /** A data write (update, release with data) settled; `value` is its w. */
  dataSettled(key: string, value: number, outcome: DataOutcome, how: string): void {
    this.checks++;
    if (outcome === 'stored' && !this.appliedData.has(value)) {
      this.fail('data', `${how} of w=${value} on "${key}" reported success, but the store never held it`);
    }
    if (outcome === 'not-applied') {
      this.notApplied.add(value);
      if (this.appliedData.has(value)) {
        this.fail(
          'data',
          `${how} of w=${value} on "${key}" was reported as not applied, but the store held it`,
        );
      }
    }
  }

  // ---- errors ----------------------------------------------------------------------------

  /** Everything core throws must be a LockError, or the caller's own abort reason / body error. */
  typedError(where: string, error: unknown, allowed: readonly unknown[] = []): void {
    this.checks++;
    if (error instanceof LockError || allowed.includes(error)) return;
    this.fail(
      'untyped-error',
      `${where} rejected with something other than a LockError: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
    );
  }
}

const NO_HOLDERS: readonly SlotHolder[] = [];

function kindOf(limit: number): 'lock' | 'semaphore' {
  return limit === 1 ? 'lock' : 'semaphore';
}

/** One forceRelease call of the workload: in which process, of which key, from when to when. */
export interface OwnForceRelease {
  process: string;
  key: string;
  began: number;
  ended: number | undefined;
}

/** A lease taken away on purpose: its lock id's Locks with tokens from `from` to `to`. */
interface TakeAway {
  at: number;
  by: string;
  freed: boolean;
  from: number;
  to: number;
}

function describeRecord(record: LockRecord | null): string {
  if (!record) return 'no record';
  const holders = holdersOf(record);
  const who = holders.length === 0 ? 'free' : holders.map((h) => `${h.lockId} token ${h.token}`).join(', ');
  return `token ${record.token}, limit ${limitOf(record)}, ${who}`;
}

function describeHolder(entry: HandedLock): string {
  return `${entry.lockId} (${entry.client.process.id}, token ${entry.token}, ${entry.via} at ${entry.handedAt.toFixed(0)})`;
}

/** How a data write's failure counts: may it have landed? */
export function dataOutcomeOf(error: unknown): DataOutcome {
  if (error instanceof LockStoreError && error.maybeApplied) return 'unknown';
  if (error instanceof LockLostError && error.maybeApplied) return 'unknown';
  return 'not-applied';
}

/** The Lock's own state ('held' until released or lost), not `isHeld`'s deadline-aware view. */
export function stillHeldState(lock: Lock<unknown>): boolean {
  return lockState(lock) === 'held';
}

function lockState(lock: Lock<unknown>): LockInspection['phase'] {
  return lockView(lock).phase;
}

/** Its release failed and is retried in the background (core's own internal view). */
function releasePending(lock: Lock<unknown>): boolean {
  return lockView(lock).releasePending;
}

function dataId(data: unknown): number {
  if (data === undefined) return 0;
  const w = (data as { w?: unknown } | null)?.w;
  return typeof w === 'number' && w > 0 ? w : -1;
}
