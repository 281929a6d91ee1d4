import type { RowBase } from '../results.js';
import { formatNumber } from './format-number.js';

/** Cells for a row whose status is not ok: the status and its note instead of numbers. */
export function statusCells(row: Pick<RowBase, 'status' | 'note'> | undefined, columns: number): string[] {
  const text = row ? `${row.status.toUpperCase()}: ${row.note ?? ''}` : 'not run';
  return [text, ...Array<string>(columns - 1).fill('')];
}

/** Requests per unit of work by operation: "PutObject 1, GetObject 0.5". */
export function perOp(byOp: Record<string, number> | undefined, units: number | undefined): string {
  if (!byOp || !units) return '';
  return Object.entries(byOp)
    .map(([op, count]) => `${op} ${formatNumber(count / units, 2)}`)
    .join(', ');
}
