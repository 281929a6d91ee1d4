/** Requests counted so far: the total and per operation ('PutObject', 'UpdateItem', 'evalsha', ...). */
export interface RequestCounts {
  total: number;
  byOp: Record<string, number>;
}

/** A running count of the requests one subject sent to its store. */
export class RequestTally {
  private total = 0;
  private readonly byOp = new Map<string, number>();

  add(op: string): void {
    this.total++;
    this.byOp.set(op, (this.byOp.get(op) ?? 0) + 1);
  }

  snapshot(): RequestCounts {
    return { total: this.total, byOp: Object.fromEntries(this.byOp) };
  }
}

/** Requests sent between two snapshots. */
export function countsBetween(before: RequestCounts, after: RequestCounts): RequestCounts {
  const byOp: Record<string, number> = {};
  for (const [op, count] of Object.entries(after.byOp)) {
    const delta = count - (before.byOp[op] ?? 0);
    if (delta > 0) byOp[op] = delta;
  }
  return { total: after.total - before.total, byOp };
}

/** Sums the counts of several processes. */
export function addCounts(...all: RequestCounts[]): RequestCounts {
  const byOp: Record<string, number> = {};
  let total = 0;
  for (const counts of all) {
    total += counts.total;
    for (const [op, count] of Object.entries(counts.byOp)) byOp[op] = (byOp[op] ?? 0) + count;
  }
  return { total, byOp };
}
