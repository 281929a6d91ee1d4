import type { LockHolderInfo, LockInfo } from '@latch/core';
import { formatDuration } from './duration.js';

const HEADER = ['KEY', 'STATE', 'HOLDER', 'CONTEXT', 'SINCE', 'LEASE LEFT', 'TOKEN'] as const;
type Row = readonly string[];

/**
 * Locks as a table, one row per holder (a lock taken with a limit has a row for each holder,
 * each with its own state, lease and token), one row for a free lock. Times are relative to
 * `now`, which is what an operator reads at a glance; `--json` has the exact instants.
 */
export function lockTable(locks: readonly LockInfo[], now: number): string[] {
  const rows: Row[] = [HEADER];
  for (const info of locks) {
    if (info.holders.length === 0) {
      // A free lock: its last fencing token, which the next holder will exceed.
      const token = info.fencingToken > 0 ? String(info.fencingToken) : '-';
      rows.push([info.key, info.state, '-', '-', '-', '-', token]);
      continue;
    }
    for (const holder of info.holders) rows.push(holderRow(info.key, holder, now));
  }
  return alignColumns(rows);
}

function holderRow(key: string, holder: LockHolderInfo, now: number): Row {
  return [
    key,
    holder.state,
    holder.owner,
    holder.context ?? '-',
    `${formatDuration(Math.max(0, now - holder.acquiredAt))} ago`,
    leaseLeft(holder.expiresAt, now),
    String(holder.fencingToken),
  ];
}

/** "14m48s" while it runs; "ended 2m ago" once it ran out; "no expiry" for a fail-closed lock. */
function leaseLeft(expiresAt: number | null, now: number): string {
  if (expiresAt === null) return 'no expiry';
  const left = expiresAt - now;
  return left >= 0 ? formatDuration(left) : `ended ${formatDuration(-left)} ago`;
}

/** Pads every column but the last to its widest cell, two spaces apart. */
function alignColumns(rows: readonly Row[]): string[] {
  const widths = HEADER.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) =>
    row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  '),
  );
}

/** What `ls` and `watch` print instead of an empty table. */
export function noLocksLine(prefix: string | undefined): string {
  return prefix ? `no locks under "${prefix}"` : 'no locks';
}
