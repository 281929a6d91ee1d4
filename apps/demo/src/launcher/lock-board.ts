import type { WireLockEvent } from '../shared/ipc-messages.js';

/** One row of the dashboard's lock table. */
export interface LockRow {
  key: string;
  /** Replica holding the lock as last reported, or null when free. */
  holder: string | null;
  fencingToken: number | null;
  /** End of the holder's lease (ms since epoch); null when free or fail-closed. */
  expiresAt: number | null;
  /** Waiting acquire calls per replica. */
  waiters: Record<string, number>;
  /** 'lost' when the holder reported losing it; an expired lease shows as held with expiresAt in the past. */
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
 * report. It displays; it decides nothing.
 */
export class LockBoard {
  private readonly rows = new Map<string, LockRow>();
  private readonly timeline: TimelineEntry[] = [];
  private nextSeq = 1;
  /** Count of 'contended' events per key prefix, for the batch summaries. */
  private readonly contended = new Map<string, number>();

  /** Applies an event; returns the timeline entry it produced, if any. */
  apply(event: WireLockEvent): TimelineEntry | undefined {
    const replica = replicaOf(event.owner);
    const row = this.row(event.key);
    row.updatedAt = event.at;
    switch (event.type) {
      case 'acquired':
        this.leaveWaiters(row, replica);
        Object.assign(row, {
          holder: replica,
          fencingToken: event.fencingToken ?? null,
          expiresAt: event.expiresAt ?? null,
          state: 'held',
        });
        break;
      case 'renewed':
        if (row.holder === replica) row.expiresAt = event.expiresAt ?? null;
        break;
      case 'released':
        if (row.holder === replica && row.fencingToken === event.fencingToken) {
          Object.assign(row, { holder: null, expiresAt: null, state: 'free' });
        }
        break;
      case 'lost':
        if (row.holder === replica && row.fencingToken === event.fencingToken) {
          Object.assign(row, { holder: null, expiresAt: null, state: 'lost' });
        }
        break;
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
    if (!event.holder || row.fencingToken !== null) return;
    Object.assign(row, {
      holder: replicaOf(event.holder.owner),
      expiresAt: event.holder.expiresAt,
      state: 'held',
    });
  }
}
