import type { SemaphoreRow } from '../results.js';
import type { SubjectInfo } from '../subjects/catalog.js';
import { formatDollars, formatNumber } from './format-number.js';
import { perOp, statusCells } from './table-cells.js';
import { textTable } from './text-table.js';

/**
 * Scenario 6 as three tables, one line per way of acquiring: uncontended costs (acquire and
 * release apart), contention, and renewal. Subjects without a semaphore are named under the tables
 * instead of filling them with empty rows.
 */
export function semaphoreTables(subjects: readonly SubjectInfo[], rows: readonly SemaphoreRow[]): string[] {
  const measured = subjects.flatMap((subject) => {
    const row = rows.find((r) => r.subject === subject.id);
    return row && row.status !== 'not-applicable' ? [{ subject, row }] : [];
  });
  // Grouped by why, so that the peers make one line.
  const notApplicable = new Map<string, string[]>();
  for (const subject of subjects) {
    const row = rows.find((r) => r.subject === subject.id);
    if (row?.status !== 'not-applicable') continue;
    const why = row.note ?? 'not applicable';
    notApplicable.set(why, [...(notApplicable.get(why) ?? []), subject.label]);
  }

  const cycleLines = measured.flatMap(({ subject, row }) => {
    if (!row.cycles) return [[subject.label, ...statusCells(row, 10)]];
    return row.cycles.map((c) => [
      subject.label,
      c.label,
      formatNumber(c.acquireP50Ms),
      formatNumber(c.acquireP99Ms),
      formatNumber(c.releaseP50Ms),
      formatNumber(c.releaseP99Ms),
      formatNumber(c.requestsPerAcquire),
      formatNumber(c.requestsPerRelease),
      perOp(c.acquireRequests.byOp, c.cycles),
      perOp(c.releaseRequests.byOp, c.cycles),
      formatDollars(c.usdPerMillionCycles),
    ]);
  });
  const contentionLines = measured.flatMap(({ subject, row }) => {
    if (!row.contention) return [[subject.label, ...statusCells(row, 11)]];
    return row.contention.map((c) => {
      const limit = `limit ${c.limit}`;
      if (c.status !== 'ok') return [subject.label, limit, ...statusCells(c, 10)];
      return [
        subject.label,
        limit,
        formatNumber(c.acquisitionsPerSec, 1),
        formatNumber(c.physicalLimitPerSec, 0),
        formatNumber(c.p50WaitMs, 1),
        formatNumber(c.p99WaitMs, 1),
        formatNumber(c.maxWaitMs, 0),
        formatNumber(c.requestsPerAcquisition),
        perOp(c.requests.byOp, c.acquisitions),
        `${c.holders.maxHolders} of ${c.limit}`,
        c.perProcess.join(' / '),
        formatNumber(c.clientCpuMsPerAcquisition),
      ];
    });
  });

  const runs = measured.flatMap(({ row }) => row.contention ?? []);
  const first = runs[0];
  const processes = Math.max(0, ...runs.map((c) => c.processes));
  // The memory store lives in one process, so its contenders share one: say so when it ran beside others.
  const where =
    processes > 1
      ? ` in ${processes} processes${runs.some((c) => c.processes === 1) ? ' (memory: in 1)' : ''}`
      : ' in 1 process';
  const setting = first
    ? `${first.contenders} contenders${where} on one key, each holding ~${first.holdMs} ms for ${formatNumber(first.windowMs / 1000, 1)} s`
    : 'contenders on one key';
  const tables = [
    `6. Semaphores, uncontended: one client (or two in turn) acquiring and releasing the same key, one cycle after another; acquire and release counted apart\n${textTable(
      [
        'subject',
        'acquired with',
        'acquire p50 ms',
        'acquire p99 ms',
        'release p50 ms',
        'release p99 ms',
        'requests/acquire',
        'requests/release',
        'per acquire',
        'per release',
        '$/M cycles',
      ],
      cycleLines,
    )}`,
    `7. Semaphores, contended: ${setting}; every acquisition checked against the limit (physical limit = limit x 1000 / hold ms per s)\n${textTable(
      [
        'subject',
        'limit',
        'acquisitions/s',
        'physical limit/s',
        'p50 wait ms',
        'p99 wait ms',
        'max wait ms',
        'requests/acquisition',
        'per acquisition',
        'max holders seen',
        'per process',
        'client CPU ms',
      ],
      contentionLines,
    )}`,
  ];
  tables.push(renewalTable(measured));
  if (notApplicable.size > 0) {
    const groups = [...notApplicable].map(([why, labels]) => `${why}: ${labels.join(', ')}`);
    tables.push(`Not run for semaphores (${groups.join('; ')}).`);
  }
  return tables;
}

function renewalTable(measured: readonly { subject: SubjectInfo; row: SemaphoreRow }[]): string {
  const lines = measured.flatMap(({ subject, row }) => {
    if (!row.renewal) return [[subject.label, ...statusCells(row, 7)]];
    return row.renewal.map((r) => [
      subject.label,
      r.limit === 1 ? `limit 1: ${r.keys} keys` : `limit ${r.limit}: ${r.keys} keys`,
      formatNumber(r.renewals, 0),
      formatNumber(r.lost, 0),
      formatNumber(r.requestsPerRenewal),
      perOp(r.requests.byOp, r.renewals),
      formatNumber(r.requestsPerMinute, 0),
    ]);
  });
  const first = measured.flatMap(({ row }) => row.renewal ?? [])[0];
  const setting = first
    ? `${first.holders} holders with leases of ${formatNumber(first.leaseMs / 1000, 1)} s (renewed every third of it), counted over ${formatNumber(first.windowMs / 1000, 1)} s`
    : 'holders renewing';
  return `8. Semaphores, renewal: ${setting}; each holder alone on its key, or sharing each key's record with others\n${textTable(
    ['subject', 'held as', 'renewals', 'leases lost', 'requests/renewal', 'per renewal', 'requests/min'],
    lines,
  )}`;
}
