import { findOverlaps, type HoldInterval } from '../overlap.js';
import type { OverlapReport } from '../results.js';

/** Checks the recorded holds for overlaps, keeping a few examples for the results file. */
export function checkOverlaps(intervals: readonly HoldInterval[]): OverlapReport {
  const overlaps = findOverlaps(intervals);
  return { count: overlaps.length, examples: overlaps.slice(0, 5) };
}

export function overlapNote(report: OverlapReport): string {
  return `${report.count} overlapping acquisition(s): two holders held one key at the same time`;
}
