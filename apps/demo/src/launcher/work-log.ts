/** A stretch of work a holder did under a lock, as the holder reported it. */
export interface WorkEntry {
  seq: number;
  resource: string;
  holder: string;
  fencingToken: number;
  enteredAt: number;
  leftAt: number | null;
  /** True when the holder died before reporting the end (the launcher closed it). */
  abandoned: boolean;
  /** How many holders were inside the resource when this one entered, itself included. */
  together: number;
}

/** More holders inside one resource than its lock allows (two, for a plain lock): what a lock must never allow. */
export interface Overlap {
  resource: string;
  first: WorkEntry;
  second: WorkEntry;
}

export interface WorkSummary {
  entries: number;
  overlaps: Overlap[];
  /** The most holders that were inside one resource at once. */
  peak: number;
}

const MAX_ENTRIES = 20_000;

/**
 * The overlap check. Holders report "enter" after acquiring and "leave" before releasing, so
 * with a working lock every leave reaches this log before the next holder's enter (the release
 * happens after the leave was acknowledged; the next acquire after the release). An enter that
 * finds another holder still inside is an overlap. Judged by arrival order in one process, not
 * by comparing clocks. A resource under a lock with a limit lets that many in at once: an
 * overlap is one more.
 */
export class WorkLog {
  private readonly log: WorkEntry[] = [];
  private readonly inside = new Map<string, Set<WorkEntry>>();
  private readonly overlaps: Overlap[] = [];
  private readonly deadHolders = new Set<string>();
  private nextSeq = 1;

  /** `capacityOf(resource)`: how many holders the resource's lock lets in at once. */
  constructor(private readonly capacityOf: (resource: string) => number = () => 1) {}

  /** The sequence number the next entry will get: summaries count from a mark. */
  mark(): number {
    return this.nextSeq;
  }

  enter(resource: string, holder: string, fencingToken: number): WorkEntry | null {
    if (this.deadHolders.has(holder)) return null; // a message from a process already gone
    const entry: WorkEntry = {
      seq: this.nextSeq++,
      resource,
      holder,
      fencingToken,
      enteredAt: Date.now(),
      leftAt: null,
      abandoned: false,
      together: 0,
    };
    const present = this.inside.get(resource) ?? new Set<WorkEntry>();
    if (present.size >= this.capacityOf(resource)) {
      for (const other of present) this.overlaps.push({ resource, first: other, second: entry });
    }
    present.add(entry);
    entry.together = present.size;
    this.inside.set(resource, present);
    this.log.push(entry);
    if (this.log.length > MAX_ENTRIES) this.log.splice(0, this.log.length - MAX_ENTRIES);
    return entry;
  }

  leave(seq: number): boolean {
    for (const [resource, present] of this.inside) {
      for (const entry of present) {
        if (entry.seq !== seq) continue;
        entry.leftAt = Date.now();
        present.delete(entry);
        if (present.size === 0) this.inside.delete(resource);
        return true;
      }
    }
    return false;
  }

  /** A holder process died: what it was doing has stopped, and nothing it sent later counts. */
  abandon(holder: string): void {
    this.deadHolders.add(holder);
    for (const [resource, present] of this.inside) {
      for (const entry of present) {
        if (entry.holder !== holder) continue;
        entry.leftAt = Date.now();
        entry.abandoned = true;
        present.delete(entry);
      }
      if (present.size === 0) this.inside.delete(resource);
    }
  }

  /** Entries and overlaps since `mark` on resources `matches` accepts. */
  summary(mark: number, matches: (resource: string) => boolean): WorkSummary {
    const entries = this.log.filter((e) => e.seq >= mark && matches(e.resource));
    return {
      entries: entries.length,
      overlaps: this.overlaps.filter((o) => o.second.seq >= mark && matches(o.resource)),
      peak: Math.max(0, ...entries.map((e) => e.together)),
    };
  }
}
