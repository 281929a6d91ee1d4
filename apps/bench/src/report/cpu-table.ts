import type { CpuRow } from '../results.js';
import type { SubjectInfo } from '../subjects/catalog.js';
import { formatNumber } from './format-number.js';
import { statusCells } from './table-cells.js';
import { textTable } from './text-table.js';

/**
 * Scenario 7: client CPU per uncontended cycle, three ways of sending the same requests:
 * through Latch, as bare AWS SDK v3 calls, as raw HTTP. Latch's share is what it adds on top of
 * the SDK, as a part of its whole cycle.
 */
export function cpuTable(subjects: readonly SubjectInfo[], rows: readonly CpuRow[]): string {
  const body = rows.map((row) => {
    const label = subjects.find((subject) => subject.id === row.subject)?.label ?? row.subject;
    if (row.status !== 'ok') return [label, ...statusCells(row, 7)];
    return [
      label,
      formatNumber(row.requestsPerCycle, 2),
      formatNumber(row.latch?.cpuMsPerCycle, 3),
      `${formatNumber(row.sdk?.cpuMsPerCycle, 3)}  ${row.sdk?.label ?? ''}`.trimEnd(),
      formatNumber(row.http?.cpuMsPerCycle, 3),
      formatNumber(row.latchOverSdkMs, 3),
      row.latchShare === undefined ? '—' : `${formatNumber(row.latchShare * 100, 0)}%`,
      formatNumber(row.latch?.cycles, 0),
    ];
  });
  return `9. CPU per uncontended cycle: client process CPU (user + system, process.cpuUsage) per acquire + release on a fresh key, next to the same requests sent as bare AWS SDK v3 calls and as raw HTTP; ways interleaved in rounds\n${textTable(
    [
      'store',
      'requests/cycle',
      'Latch ms',
      'bare SDK v3 ms',
      'raw HTTP ms',
      'Latch over SDK ms',
      'Latch share',
      'cycles each',
    ],
    body,
  )}`;
}
