import type { WireLockEvent } from '../shared/ipc-messages.js';
import { replicaOf } from './lock-board.js';

/** How a hold ended; 'held' while it lasts. */
export type HoldEnding = 'held' | 'released' | 'lost' | 'expired';

/** One stretch of time a replica held a key, from its acquisition to its release, loss or lease end. */
export interface Hold {
  id: number;
  key: string;
  replica: string;
  fencingToken: number;
  start: number;
  /** When it ended (for 'expired': when its lease ran out, possibly still ahead); null while held. */
  end: number | null;
  /** End of the lease as last reported (acquired, renewed); null when fail-closed. */
  leaseEnd: number | null;
  ending: HoldEnding;
  /** Why it was lost, as the holder reported it. */
  lostReason?: string | undefined;
  /** How it began, judged from the hold it followed on the key; null for none worth a mark. */
  began: HoldStart | null;
}

/**
 * A hand-over: the previous holder released and this one acquired within HANDOVER_GAP_MS.
 * A takeover: the previous holder never released (it was killed, or lost its lease) and this
 * one acquired once that lease had run out.
 */
export interface HoldStart {
  kind: 'handover' | 'takeover';
  from: { replica: string; fencingToken: number; ending: Exclude<HoldEnding, 'held'> };
  /** From the previous hold's end to this acquisition (negative when events' clocks differ by a hair). */
  gapMs: number;
}

/**
 * One acquire call that did not get the key at once: from 'waiting' to acquired or contended.
 * A caller turned away without waiting (tryAcquire, a skipped cron run) is a wait of no length.
 */
export interface Wait {
  id: number;
  key: string;
  replica: string;
  start: number;
  end: number | null;
  outcome: 'waiting' | 'acquired' | 'busy' | 'timeout' | 'aborted' | 'gone';
  /** The token it got, when it got the key. */
  fencingToken?: number | undefined;
  /** Who held the key when the caller last looked, if core knew. */
  heldBy?: string | undefined;
}

/** Everything the timeline shows for one key. */
export interface HoldLane {
  key: string;
  /** How many may hold the key at once. */
  limit: number;
  /** Oldest first. */
  holds: Hold[];
  waits: Wait[];
}

export interface HoldTimelineBounds {
  /** Finished holds and waits older than this (before the newest event) are dropped. */
  windowMs: number;
  holdsPerKey: number;
  waitsPerKey: number;
  keys: number;
}

/** A release followed this soon by the next acquisition is a hand-over; later, the lock sat free. */
export const HANDOVER_GAP_MS = 1_000;
/** Events from different processes are stamped by different calls to the clock: allow a hair. */
const CLOCK_SLACK_MS = 50;
const DEFAULT_BOUNDS: HoldTimelineBounds = {
  windowMs: 5 * 60_000,
  holdsPerKey: 120,
  waitsPerKey: 200,
  keys: 40,
};

interface KeyHistory {
  holds: Hold[];
  waits: Wait[];
  lastAt: number;
}

/**
 * The dashboard's timeline: per key, who held it from when to when with which token, who
 * waited, and where the key passed from one holder to the next by a hand-over or a takeover.
 * Built only from the replicas' lock events, which reach the launcher over separate channels
 * and so not always in order: a hold's predecessor is found by fencing token, not by arrival,
 * and how a hold began is judged afresh whenever a lane is read.
 */
export class HoldTimeline {
  private readonly history = new Map<string, KeyHistory>();
  private readonly bounds: HoldTimelineBounds;
  private nextId = 1;

  /** `limitOf(key)`: how many may hold the key at once, as the demo configures it. */
  constructor(
    private readonly limitOf: (key: string) => number = () => 1,
    bounds: Partial<HoldTimelineBounds> = {},
  ) {
    this.bounds = { ...DEFAULT_BOUNDS, ...bounds };
  }

  /** Applies an event; returns the key whose lane changed, if any. */
  apply(event: WireLockEvent): string | undefined {
    const history = this.keyHistory(event.key, event.at);
    const changed = this.record(history, event, replicaOf(event.owner));
    this.trim(event.key, history, event.at);
    return changed ? event.key : undefined;
  }

  private record(history: KeyHistory, event: WireLockEvent, replica: string): boolean {
    switch (event.type) {
      case 'acquired': {
        if (event.fencingToken === undefined) return false;
        this.endWait(history, replica, event.at, 'acquired', event.fencingToken);
        // Whoever still looks held but whose lease ended before this acquisition never released.
        for (const hold of history.holds) {
          if (hold.ending === 'held' && hold.leaseEnd !== null && hold.leaseEnd <= event.at) {
            hold.ending = 'expired';
            hold.end = hold.leaseEnd;
          }
        }
        history.holds.push({
          id: this.nextId++,
          key: event.key,
          replica,
          fencingToken: event.fencingToken,
          start: event.at,
          end: null,
          leaseEnd: event.expiresAt ?? null,
          ending: 'held',
          began: null,
        });
        break;
      }
      case 'renewed': {
        const hold = this.heldBy(history, replica, event.fencingToken);
        if (!hold) return false;
        hold.leaseEnd = event.expiresAt ?? null;
        break;
      }
      case 'released':
      case 'lost': {
        const hold = this.heldBy(history, replica, event.fencingToken);
        if (!hold) return false;
        hold.ending = event.type;
        hold.end = event.at;
        if (event.type === 'lost') hold.lostReason = event.error;
        break;
      }
      case 'waiting':
        history.waits.push({
          id: this.nextId++,
          key: event.key,
          replica,
          start: event.at,
          end: null,
          outcome: 'waiting',
          heldBy: event.holder ? replicaOf(event.holder.owner) : undefined,
        });
        break;
      case 'contended': {
        const reason = event.reason ?? 'busy';
        const heldBy = event.holder ? replicaOf(event.holder.owner) : undefined;
        // tryAcquire ('busy') never waits; a timeout or abort ends a wait, or was one of no length (waitMs 0).
        const ended = reason === 'busy' ? undefined : this.endWait(history, replica, event.at, reason);
        if (ended) {
          ended.heldBy = heldBy ?? ended.heldBy;
        } else {
          history.waits.push({
            id: this.nextId++,
            key: event.key,
            replica,
            start: event.at,
            end: event.at,
            outcome: reason,
            heldBy,
          });
        }
        break;
      }
      default:
        return false;
    }
    return true;
  }

  /**
   * A replica process is gone (killed or exited): its waits end now, and what it held ends
   * when its lease runs out, since nobody will release it. Returns the keys whose lane changed.
   */
  replicaGone(replica: string, at: number): string[] {
    const changed: string[] = [];
    for (const [key, history] of this.history) {
      let touched = false;
      for (const wait of history.waits) {
        if (wait.replica !== replica || wait.end !== null) continue;
        wait.end = at;
        wait.outcome = 'gone';
        touched = true;
      }
      for (const hold of history.holds) {
        // A fail-closed hold (no lease end) stays held: only a forced release frees it.
        if (hold.replica !== replica || hold.ending !== 'held' || hold.leaseEnd === null) continue;
        hold.ending = 'expired';
        hold.end = hold.leaseEnd;
        touched = true;
      }
      if (touched) changed.push(key);
    }
    return changed;
  }

  /** Every key with something to show, in name order. */
  keys(): string[] {
    return [...this.history.keys()].sort((a, b) => a.localeCompare(b));
  }

  /** The lanes of `keys` (every key by default), with how each hold began. */
  lanes(keys: Iterable<string> = this.keys()): HoldLane[] {
    const lanes: HoldLane[] = [];
    for (const key of keys) {
      const history = this.history.get(key);
      if (!history) continue;
      lanes.push({
        key,
        limit: this.limitOf(key),
        holds: withStarts(history.holds).sort((a, b) => a.start - b.start || a.fencingToken - b.fencingToken),
        waits: history.waits.map((wait) => ({ ...wait })),
      });
    }
    return lanes;
  }

  private keyHistory(key: string, at: number): KeyHistory {
    let history = this.history.get(key);
    if (!history) {
      history = { holds: [], waits: [], lastAt: at };
      this.history.set(key, history);
      this.dropQuietestKeys();
    }
    history.lastAt = Math.max(history.lastAt, at);
    return history;
  }

  /** The hold `replica` has with `fencingToken`, while it lasts. */
  private heldBy(history: KeyHistory, replica: string, fencingToken: number | undefined): Hold | undefined {
    return history.holds.find(
      (h) => h.replica === replica && h.fencingToken === fencingToken && h.ending === 'held',
    );
  }

  /** Ends the oldest open wait of `replica` on the key (waiters of one process are served in order). */
  private endWait(
    history: KeyHistory,
    replica: string,
    at: number,
    outcome: Wait['outcome'],
    fencingToken?: number,
  ): Wait | undefined {
    const wait = history.waits.find((w) => w.replica === replica && w.end === null);
    if (!wait) return undefined;
    wait.end = at;
    wait.outcome = outcome;
    wait.fencingToken = fencingToken;
    return wait;
  }

  /** Bounded memory: only the last window, at most so many holds and waits per key. */
  private trim(key: string, history: KeyHistory, now: number): void {
    const since = now - this.bounds.windowMs;
    const recent = <T extends { end: number | null }>(item: T) => item.end === null || item.end >= since;
    history.holds = history.holds.filter(recent).slice(-this.bounds.holdsPerKey);
    history.waits = history.waits.filter(recent).slice(-this.bounds.waitsPerKey);
    if (history.holds.length === 0 && history.waits.length === 0) this.history.delete(key);
  }

  /** At most `bounds.keys` keys: the one that has been quiet longest goes first. */
  private dropQuietestKeys(): void {
    while (this.history.size > this.bounds.keys) {
      let quietest: string | undefined;
      let quietestAt = Number.POSITIVE_INFINITY;
      for (const [key, history] of this.history) {
        if (history.lastAt < quietestAt) [quietest, quietestAt] = [key, history.lastAt];
      }
      this.history.delete(quietest!);
    }
  }
}

/**
 * Copies of `holds` with `began` filled in. In fencing-token order, each hold follows the
 * ended hold before it that no other hold followed yet, ending closest to its start: for a
 * plain lock, the previous token; under a limit, the holder whose place it took.
 */
function withStarts(holds: Hold[]): Hold[] {
  const byToken = holds
    .map((hold): Hold => ({ ...hold, began: null }))
    .sort((a, b) => a.fencingToken - b.fencingToken);
  const followed = new Set<Hold>();
  for (const hold of byToken) {
    let previous: Hold | undefined;
    for (const candidate of byToken) {
      if (candidate.fencingToken >= hold.fencingToken) break;
      if (candidate.end === null || followed.has(candidate)) continue;
      if (candidate.end > hold.start + CLOCK_SLACK_MS) continue;
      if (!previous || candidate.end > previous.end!) previous = candidate;
    }
    if (!previous) continue;
    followed.add(previous);
    const gapMs = hold.start - previous.end!;
    const ending = previous.ending as HoldStart['from']['ending'];
    const from = { replica: previous.replica, fencingToken: previous.fencingToken, ending };
    if (ending !== 'released') hold.began = { kind: 'takeover', from, gapMs };
    else if (gapMs <= HANDOVER_GAP_MS) hold.began = { kind: 'handover', from, gapMs };
  }
  return byToken;
}
