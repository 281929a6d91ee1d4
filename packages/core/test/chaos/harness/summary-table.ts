/** One line of the reliability summary: a scenario run on one store. */
export interface SummaryRow {
  scenario: string;
  store: string;
  /** e.g. '3 × 2': worker processes × workers in each. */
  workers: string;
  acquisitions: number;
  /** Faults injected that fired (undefined: the scenario injects none this way). */
  faults: number | undefined;
  overlaps: number;
  unfencedOverlaps: number;
  staleWritesRejected: number;
  lostOrDoubled: number;
  /** Longest time from a holder's failure to the next holder's first write, in ms. */
  worstRecoveryMs: number | undefined;
}

const COLUMNS: Array<[string, (row: SummaryRow) => string]> = [
  ['scenario', (r) => r.scenario],
  ['store', (r) => r.store],
  ['processes × workers', (r) => r.workers],
  ['acquisitions', (r) => String(r.acquisitions)],
  ['faults fired', (r) => (r.faults === undefined ? '–' : String(r.faults))],
  ['overlaps', (r) => String(r.overlaps)],
  ['overlaps without fencing', (r) => String(r.unfencedOverlaps)],
  ['stale writes rejected', (r) => String(r.staleWritesRejected)],
  ['units lost or doubled', (r) => String(r.lostOrDoubled)],
  [
    'worst recovery',
    (r) => (r.worstRecoveryMs === undefined ? '–' : `${(r.worstRecoveryMs / 1000).toFixed(2)} s`),
  ],
];

/** The rows as an aligned Markdown table (so it reads the same in a terminal and in the README). */
export function formatSummaryTable(rows: readonly SummaryRow[]): string {
  const cells = [COLUMNS.map(([title]) => title), ...rows.map((row) => COLUMNS.map(([, cell]) => cell(row)))];
  const widths = COLUMNS.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)));
  const line = (values: string[]) => `| ${values.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  const rule = `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`;
  return [line(cells[0]!), rule, ...cells.slice(1).map(line)].join('\n');
}
