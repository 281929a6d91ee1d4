import type { Lock } from '../src/client/lock.js';
import type { LockRecord } from '../src/contract/lock-record.js';
import { LockError, LockLostError, LockStoreError } from '../src/shared/errors.js';
import type { AppliedWrite } from './backend.js';
import { FencedResource } from './fenced-resource.js';
import type { SimProcess } from './sim-scheduler.js';
import type { World } from './world.js';

/** What the checkers need to know about the client a lock lives in. */
export interface ClientInfo {
  process: SimProcess;
  pollMs: number;
}

/** How a Lock reached user code. */
export type HandedVia = 'acquire' | 'tryAcquire' | 'withLock' | 'campaign' | 'resume';

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
  requestTimeoutMs: number;
  /** Faults stop and the tight abort bounds apply from here. */
  quietFrom: number;
  /**
   * Violations matching this ("check: message") are counted, not reported, and the run goes
   * on: only to look past a known core bug while it is being fixed (`--ignore`).
   */
  ignore?: RegExp | undefined;
}

/** Slack added to every bound: scheduling granularity, a request round trip, a retry. */
const MARGIN_MS = 1000;

/**
 * The invariants, checked as the run goes (the driver calls `afterStep` after every event;
 * the backend, the fenced resource and the workload report to the other hooks as things happen):
 * 1. exclusion: never two live holders of a key at one instant;
 * 2. fencing tokens increase in hand-out order and never repeat; the stored token never goes back;
 * 3. a write after an `isHeld` check is accepted by the fenced resource;
 * 4. data: stored writes stay until replaced, nothing reappears, "not applied" never lands;
 * 5. locks taken away on purpose learn it within a bound (liveness checks live in the driver);
 * 6. only typed errors (the driver watches for unhandled rejections).
 */
export class Checker {
  violation: Violation | undefined;
  checks = 0;
  /** Violations matched by `settings.ignore`. */
  ignored = 0;
  readonly resource = new FencedResource();
  private readonly live: HandedLock[] = [];
  /** Handed locks by lease (lockId#token: a contender may reuse its lockId for a later lease). */
  private readonly byLease = new Map<string, HandedLock[]>();
  private seq = 0;
  private readonly holdersScratch: HandedLock[] = [];
  /** Take-aways per lease (lockId#token): when, and by which process's write. */
  private readonly takeAways = new Map<string, Array<{ at: number; by: string; freed: boolean }>>();
  /** Highest token handed to user code per key (acquisitions, not resumes). */
  private readonly lastHanded = new Map<string, number>();
  private readonly tokenOwner = new Map<string, Map<number, string>>();
  private readonly maxStoredToken = new Map<string, number>();
  /** Process that last wrote each lease (the claimer, then a resumer). */
  readonly leaseProcess = new Map<string, string>();
  /** Lock ids core handed to user code, in any Lock. */
  readonly handedLockIds = new Set<string>();
  readonly lockAtLeastIds = new Set<string>();
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
    options: { heartbeatMs: number | false; lockAtLeast: boolean; resumeStartedAt?: number },
  ): HandedLock {
    const lockId = lock.lease.lockId;
    const token = lock.fencingToken;
    const leaseMs = lock.lease.record.holder?.leaseMs ?? 0;
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
    // Taken away before it even reached the caller (a forceRelease between the claim landing and its answer)?
    const lease = `${lockId}#${token}`;
    const earlier = this.takeAways.get(lease) ?? [];
    const takenBefore =
      via === 'resume'
        ? // the resume's own renewal moves the lease here; anything else after it started takes it away
          earlier.find((t) => t.at >= options.resumeStartedAt! && (t.freed || t.by !== client.process.id))
        : earlier[0];
    if (takenBefore) {
      entry.takenAwayAt = takenBefore.at;
      entry.pausedAtTakeAway = client.process.pausedMs();
    }
    this.handedLockIds.add(lockId);
    if (options.lockAtLeast) this.lockAtLeastIds.add(lockId);
    this.live.push(entry);
    const same = this.byLease.get(lease);
    if (same) same.push(entry);
    else this.byLease.set(lease, [entry]);

    this.checks++;
    const owners = this.tokenOwner.get(lock.key) ?? new Map<number, string>();
    this.tokenOwner.set(lock.key, owners);
    const owner = owners.get(token);
    if (owner !== undefined && owner !== lockId) {
      this.fail(
        'fencing-token',
        `token ${token} of "${lock.key}" handed to ${lockId} (${client.process.id}) was already handed to ${owner}`,
      );
    }
    owners.set(token, lockId);
    if (via !== 'resume' && entry.takenAwayAt === undefined && this.settings.exclusionChecked) {
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

  /** The workload writes to the fenced resource right after `entry.lock.isHeld` returned true. */
  resourceWrite(entry: HandedLock): void {
    this.checks++;
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

  // ---- what the store applied ----------------------------------------------------------------

  applied(write: AppliedWrite): void {
    this.checks++;
    const { key, before, after } = write;
    const was = before?.holder;
    const now = after?.holder;
    const maxToken = this.maxStoredToken.get(key) ?? 0;
    if (after) {
      if (now && now.lockId !== was?.lockId) {
        if (after.token <= maxToken) {
          this.fail(
            'fencing-token',
            `a new lease of "${key}" (${now.lockId}, by ${write.from}) was stored with token ${after.token}, not above the highest stored before (${maxToken})`,
          );
        }
        this.leaseProcess.set(now.lockId, write.from);
      } else if (after.token < maxToken) {
        this.fail(
          'fencing-token',
          `the stored token of "${key}" went back from ${maxToken} to ${after.token} (${write.op} by ${write.from})`,
        );
      }
      this.maxStoredToken.set(key, Math.max(maxToken, after.token));
    }
    if (was) {
      const lease = `${was.lockId}#${before!.token}`;
      const own = after !== null && this.isOwnWrite(lease, after.writeId);
      if (!now && !own) this.takeAway(lease, write.from, true);
      else if (now && now.lockId === was.lockId && !own) {
        // Renewed by a write none of its Locks sent: a resume in another client.
        this.takeAway(lease, write.from, false);
        this.leaseProcess.set(was.lockId, write.from);
      }
    }
    this.dataApplied(key, before, after, write.from);
  }

  private isOwnWrite(lease: string, writeId: string): boolean {
    const entries = this.byLease.get(lease);
    if (!entries) return false;
    for (const entry of entries) if (entry.lock.lease.writeIds.has(writeId)) return true;
    return false;
  }

  private takeAway(lease: string, by: string, freed: boolean): void {
    const list = this.takeAways.get(lease) ?? [];
    list.push({ at: this.world.now, by, freed });
    this.takeAways.set(lease, list);
    for (const entry of this.byLease.get(lease) ?? []) {
      if (entry.takenAwayAt !== undefined) continue;
      if (!freed && entry.client.process.id === by) continue; // the resumer keeps it
      entry.takenAwayAt = this.world.now;
      entry.pausedAtTakeAway = entry.client.process.pausedMs();
    }
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
      for (const other of holders) {
        if (other.key !== entry.key) continue;
        this.fail(
          'exclusion',
          `two live holders of "${entry.key}": ${other.lockId} (${other.client.process.id}, token ${other.token}, ${other.via} at ${other.handedAt.toFixed(0)}) and ${entry.lockId} (${process.id}, token ${entry.token}, ${entry.via} at ${entry.handedAt.toFixed(0)}), both isHeld with live signals`,
        );
      }
      holders.push(entry);
    }
    this.live.length = write;
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
    const live = (
      entry.lock as unknown as { settings?: { leaseMs?: number | null; heartbeatMs?: number | false } }
    ).settings;
    const failClosed =
      live?.leaseMs === undefined ? entry.leaseMs === 0 : !Number.isFinite(live.leaseMs ?? NaN);
    const leaseMs = Math.max(entry.leaseMs, failClosed ? 0 : (live?.leaseMs ?? 0));
    const heartbeatMs = live?.heartbeatMs ?? entry.heartbeatMs;
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

/** How a data write's failure counts: may it have landed? */
export function dataOutcomeOf(error: unknown): DataOutcome {
  if (error instanceof LockStoreError && error.maybeApplied) return 'unknown';
  if (error instanceof LockLostError && (error as { maybeApplied?: boolean }).maybeApplied === true) {
    return 'unknown';
  }
  return 'not-applied';
}

/** The Lock's own state ('held' until released or lost), not `isHeld`'s deadline-aware view. */
function stillHeldState(lock: Lock<unknown>): boolean {
  return (lock as unknown as { state: string }).state === 'held';
}

function dataId(data: unknown): number {
  if (data === undefined) return 0;
  const w = (data as { w?: unknown } | null)?.w;
  return typeof w === 'number' && w > 0 ? w : -1;
}
