import type { WireLockEvent } from '../shared/ipc-messages.js';

/** One holder of a lock, as last reported. */
export interface LockHolder {
  replica: string;
  /** Null for a holder only a waiter has seen (no acquisition of it was reported). */
  fencingToken: number | null;
  /** End of its lease (ms since epoch); null when fail-closed. */
  expiresAt: number | null;
}

/** One row of the dashboard's lock table. */
export interface LockRow {
  key: string;
  /** How many may hold the lock at once: 1 for a plain lock. */
  limit: number;
  /** Every holder as last reported, lowest fencing token first; at most one for a plain lock. */
  holders: LockHolder[];
  /** Replica of the newest holder, or null when free. */
  holder: string | null;
  /** The newest fencing token reported for this key; kept when the lock is free. */
  fencingToken: number | null;
  /** End of the newest holder's lease (ms since epoch); null when free or fail-closed. */
  expiresAt: number | null;
  /** Waiting acquire calls per replica. */
  waiters: Record<string, number>;
  /** 'lost' when the last holder reported losing it; an expired lease shows as held with expiresAt in the past. */
  state: 'held' | 'free' | 'lost';
  updatedAt: number;
}

/** One entry of a replica's timeline. */
export interface TimelineEntry {
  seq: number;
  replica: string;
  type: WireLockEvent['type'];
  key: string;
  at: number;
  fencingToken?: number | undefined;
  /** Who held the lock when this replica waited or was turned away. */
  holder?: string | undefined;
  reason?: string | undefined;
}

/** The lock events worth a line on the timeline; renewals would drown the rest. */
const TIMELINE_TYPES = new Set<WireLockEvent['type']>([
  'acquired',
  'released',
  'contended',
  'lost',
  'waiting',
]);
const TIMELINE_LENGTH = 300;

/** Replica name from a lock owner id ("replica-2:pid4242" → "replica-2"). */
export const replicaOf = (owner: string): string => owner.split(':')[0] ?? owner;

/**
 * The dashboard's picture of the locks, built only from the events the replicas' LockClients
 * report. It displays; it decides nothing. A lock with a limit keeps every holder until it
 * reports a release or a loss, or its lease has ended when another holder arrives: so a
 * limit that did not hold would show as more holders than the limit.
 */
export class LockBoard {
  private readonly rows = new Map<string, LockRow>();
  private readonly timeline: TimelineEntry[] = [];
  private nextSeq = 1;
  /** Count of 'contended' events per key prefix, for the batch summaries. */
  private readonly contended = new Map<string, number>();

  /** `limitOf(key)`: how many may hold the key at once, as the demo configures it. */
  constructor(private readonly limitOf: (key: string) => number = () => 1) {}

  /** Applies an event; returns the timeline entry it produced, if any. */
  apply(event: WireLockEvent): TimelineEntry | undefined {
    const replica = replicaOf(event.owner);
    const row = this.row(event.key);
    row.updatedAt = event.at;
    switch (event.type) {
      case 'acquired': {
        this.leaveWaiters(row, replica);
        const token = event.fencingToken ?? null;
        // A plain lock has one holder: whoever acquires replaces it. Under a limit, a holder
        // leaves when it says so, or when its lease has ended by the time another one arrives.
        const stay =
          row.limit === 1 ? [] : row.holders.filter((h) => h.expiresAt === null || h.expiresAt > event.at);
        row.holders = [...stay, { replica, fencingToken: token, expiresAt: event.expiresAt ?? null }].sort(
          (a, b) => (a.fencingToken ?? 0) - (b.fencingToken ?? 0),
        );
        row.fencingToken = token === null ? row.fencingToken : Math.max(token, row.fencingToken ?? 0);
        row.state = 'held';
        break;
      }
      case 'renewed': {
        const holder = this.findHolder(row, replica, event.fencingToken, true);
        if (holder) holder.expiresAt = event.expiresAt ?? null;
        break;
      }
      case 'released':
      case 'lost': {
        const holder = this.findHolder(row, replica, event.fencingToken, false);
        if (!holder) break;
        row.holders = row.holders.filter((h) => h !== holder);
        if (row.holders.length === 0) row.state = event.type === 'released' ? 'free' : 'lost';
        break;
      }
      case 'waiting':
        row.waiters[replica] = (row.waiters[replica] ?? 0) + 1;
        this.learnHolder(row, event);
        break;
      case 'contended':
        if (event.reason !== 'busy') this.leaveWaiters(row, replica);
        this.learnHolder(row, event);
        this.contended.set(event.key, (this.contended.get(event.key) ?? 0) + 1);
        break;
    }
    this.showNewestHolder(row);
    if (!TIMELINE_TYPES.has(event.type)) return undefined;
    const entry: TimelineEntry = {
      seq: this.nextSeq++,
      replica,
      type: event.type,
      key: event.key,
      at: event.at,
      fencingToken: event.fencingToken,
      holder: event.holder ? replicaOf(event.holder.owner) : undefined,
      reason: event.reason ?? event.error,
    };
    this.timeline.push(entry);
    if (this.timeline.length > TIMELINE_LENGTH) this.timeline.shift();
    return entry;
  }

  /** A replica process is gone: it waits for nothing any more. What it held stays until the lease ends. */
  forgetWaiters(replica: string): void {
    for (const row of this.rows.values()) delete row.waiters[replica];
  }

  /** How many times any lock under `prefix` was found held (tryAcquire refused, a wait ran out). */
  contendedCount(prefix: string): number {
    let total = 0;
    for (const [key, count] of this.contended) if (key.startsWith(prefix)) total += count;
    return total;
  }

  locks(): LockRow[] {
    return [...this.rows.values()].sort((a, b) => a.key.localeCompare(b.key));
  }

  recent(): TimelineEntry[] {
    return [...this.timeline];
  }

  private row(key: string): LockRow {
    let row = this.rows.get(key);
    if (!row) {
      row = {
        key,
        limit: this.limitOf(key),
        holders: [],
        holder: null,
        fencingToken: null,
        expiresAt: null,
        waiters: {},
        state: 'free',
        updatedAt: 0,
      };
      this.rows.set(key, row);
    }
    return row;
  }

  private leaveWaiters(row: LockRow, replica: string): void {
    const count = row.waiters[replica] ?? 0;
    if (count <= 1) delete row.waiters[replica];
    else row.waiters[replica] = count - 1;
  }

  /** A waiter saw a holder of a key no acquisition was reported for yet (held before a restart). */
  private learnHolder(row: LockRow, event: WireLockEvent): void {
    if (!event.holder || row.fencingToken !== null || row.holders.length > 0) return;
    row.holders = [
      { replica: replicaOf(event.holder.owner), fencingToken: null, expiresAt: event.holder.expiresAt },
    ];
    row.state = 'held';
  }

  /**
   * The holder an event of `replica` is about: the one with its fencing token. A holder only
   * a waiter saw has no token; a renewal may still move its lease (`matchUnknown`).
   */
  private findHolder(
    row: LockRow,
    replica: string,
    fencingToken: number | undefined,
    matchUnknown: boolean,
  ): LockHolder | undefined {
    return row.holders.find(
      (h) =>
        h.replica === replica &&
        (h.fencingToken === (fencingToken ?? null) || (matchUnknown && h.fencingToken === null)),
    );
  }

  /** The row's holder and lease columns show the newest holder. */
  private showNewestHolder(row: LockRow): void {
    const newest = row.holders.at(-1);
    row.holder = newest?.replica ?? null;
    row.expiresAt = newest?.expiresAt ?? null;
  }
}
