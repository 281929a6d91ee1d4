import type { HoldInterval } from './overlap.js';

/** An acquisition that took a key while `limit` others already held it. */
export interface OverLimit {
  key: string;
  /** The acquisition beyond the limit. */
  acquisition: HoldInterval;
  /** Everyone who held the key at that moment, the acquisition included. */
  holders: HoldInterval[];
}

export interface HolderCount {
  /** Most holders of one key at the same moment (0 when nothing was held). */
  maxHolders: number;
  overLimit: OverLimit[];
}

/**
 * Counts how many held each key at once, and finds every acquisition that made it more than
 * `limit`: the semaphore's counterpart of findOverlaps (with limit 1 it finds the same
 * acquisitions). A correct semaphore never produces one, for the same reason a correct lock
 * never overlaps: an acquire resolves only after the slot it takes was freed in the store,
 * which is after its previous holder recorded `releasedAt`. Touching intervals (end == start)
 * do not count as held together.
 */
export function countHolders(intervals: readonly HoldInterval[], limit: number): HolderCount {
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
  let maxHolders = 0;
  const overLimit: OverLimit[] = [];
  for (const [key, list] of byKey) {
    list.sort((a, b) => a.acquiredAt - b.acquiredAt);
    let holding: HoldInterval[] = [];
    for (const interval of list) {
      // Those who released by now (or exactly now) no longer hold the key.
      holding = holding.filter((held) => held.releasedAt > interval.acquiredAt);
      holding.push(interval);
      maxHolders = Math.max(maxHolders, holding.length);
      if (holding.length > limit) overLimit.push({ key, acquisition: interval, holders: [...holding] });
    }
  }
  return { maxHolders, overLimit };
}
