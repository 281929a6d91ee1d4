import type { BenchResults, RowBase } from './results.js';
import { subjectInfo } from './subjects/catalog.js';

export interface Verdict {
  /** Rows that fail the bench: a crashed run, or Latch itself invalid (an overlap, a semaphore over its limit). */
  failures: RowBase[];
  /** Peers whose results are invalid: reported, not a failure of the bench. */
  peerInvalid: RowBase[];
}

/** Whether a run passes: a fast wrong result must not. */
export function judgeRun(results: BenchResults): Verdict {
  const rows: RowBase[] = Object.values(results.scenarios).flat();
  const failed = rows.filter((row) => row.status === 'failed');
  const oursInvalid = rows.filter((row) => row.status === 'invalid' && subjectInfo(row.subject).ours);
  const peerInvalid = rows.filter((row) => row.status === 'invalid' && !subjectInfo(row.subject).ours);
  return { failures: [...failed, ...oursInvalid], peerInvalid };
}
