/** One line of the reliability summary: a scenario run on one store. */
export interface SummaryRow {
  scenario: string;
  store: string;
  /** e.g. '3 × 2': worker processes × workers in each. */
  workers: string;
  acquisitions: number;
  /** Lease renewals (heartbeats) that landed while locks were held. */
  renewals: number;
  /** Faults injected that fired (undefined: the scenario injects none this way). */
  faults: number | undefined;
  /** Accepted sections that overlapped, tokens used twice or accepted out of order. */
  overlaps: number;
  /** Pairs of sections whose holders both believed they held the lock at once, fencing or not. */
  unfencedOverlaps: number;
  staleWritesRejected: number;
  lostOrDoubled: number;
  /** After a kill: the least time from the dead holder's lease end to the next acquisition's start, in ms (never negative). */
  earliestTakeoverMs: number | undefined;
  /** Longest time from a holder's failure to the next holder's first write, in ms. */
  worstRecoveryMs: number | undefined;
}

const COLUMNS: Array<[string, (row: SummaryRow) => string]> = [
  ['scenario', (r) => r.scenario],
  ['store', (r) => r.store],
  ['processes × workers', (r) => r.workers],
  ['acquisitions', (r) => String(r.acquisitions)],
  ['renewals', (r) => String(r.renewals)],
  ['faults fired', (r) => (r.faults === undefined ? '–' : String(r.faults))],
  ['overlaps', (r) => String(r.overlaps)],
  ['unfenced overlaps', (r) => String(r.unfencedOverlaps)],
  ['stale writes rejected', (r) => String(r.staleWritesRejected)],
  ['units lost or doubled', (r) => String(r.lostOrDoubled)],
  [
    'takeover after lease end',
    (r) => (r.earliestTakeoverMs === undefined ? '–' : signedMs(r.earliestTakeoverMs)),
  ],
  [
    'worst recovery',
    (r) => (r.worstRecoveryMs === undefined ? '–' : `${(r.worstRecoveryMs / 1000).toFixed(2)} s`),
  ],
];

function signedMs(ms: number): string {
  if (Number.isNaN(ms)) return '?';
  if (!Number.isFinite(ms)) return 'never';
  return `${ms < 0 ? '−' : '+'}${Math.round(Math.abs(ms))} ms`;
}

/** The rows as an aligned Markdown table (so it reads the same in a terminal and in the README). */
export function formatSummaryTable(rows: readonly SummaryRow[]): string {
  const cells = [COLUMNS.map(([title]) => title), ...rows.map((row) => COLUMNS.map(([, cell]) => cell(row)))];
  const widths = COLUMNS.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)));
  const line = (values: string[]) => `| ${values.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  const rule = `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`;
  return [line(cells[0]!), rule, ...cells.slice(1).map(line)].join('\n');
}
