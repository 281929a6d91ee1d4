/** One acquisition as seen by its holder, on the shared monotonic clock (see clock.ts). */
export interface HoldInterval {
  key: string;
  /** Which contender held it ("p0c2" = process 0, contender 2). */
  holder: string;
  /** When `acquire` resolved. */
  acquiredAt: number;
  /** When the holder called `release` (it stopped relying on the lock then). */
  releasedAt: number;
}

export interface Overlap {
  key: string;
  first: HoldInterval;
  second: HoldInterval;
  /** How long both believed they held the key. */
  overlapMs: number;
}

/**
 * Finds every pair of holders that held one key at the same time. A correct lock never
 * produces one: the next holder's acquire resolves only after the previous holder's release
 * reached the store, which is after the previous holder recorded `releasedAt`. Touching
 * intervals (end == start) are not an overlap.
 */
export function findOverlaps(intervals: readonly HoldInterval[]): Overlap[] {
  const byKey = new Map<string, HoldInterval[]>();
  for (const interval of intervals) {
    if (!(interval.releasedAt >= interval.acquiredAt)) {
      throw new RangeError(
        `Hold interval of ${interval.holder} on "${interval.key}" ends before it starts (${interval.acquiredAt} > ${interval.releasedAt}).`,
      );
    }
    const list = byKey.get(interval.key) ?? [];
    list.push(interval);
    byKey.set(interval.key, list);
  }
  const overlaps: Overlap[] = [];
  for (const [key, list] of byKey) {
    list.sort((a, b) => a.acquiredAt - b.acquiredAt);
    // The interval reaching furthest so far: any later start before its end overlaps it.
    let reach: HoldInterval | undefined;
    for (const interval of list) {
      if (reach && interval.acquiredAt < reach.releasedAt) {
        overlaps.push({
          key,
          first: reach,
          second: interval,
          overlapMs: Math.min(reach.releasedAt, interval.releasedAt) - interval.acquiredAt,
        });
      }
      if (!reach || interval.releasedAt > reach.releasedAt) reach = interval;
    }
  }
  return overlaps;
}
