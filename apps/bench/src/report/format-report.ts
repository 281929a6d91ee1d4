import { PRICES } from '../prices.js';
import type { BenchResults, HandoffRow, RowBase } from '../results.js';
import type { SubjectId, SubjectInfo } from '../subjects/catalog.js';
import { cpuTable } from './cpu-table.js';
import { advantage, formatDollars, formatNumber } from './format-number.js';
import { semaphoreTables } from './semaphore-tables.js';
import { perOp, statusCells } from './table-cells.js';
import { textTable } from './text-table.js';

type Scenarios = BenchResults['scenarios'];

const RATIO_LEGEND =
  'Latch advantage = how many times better the Latch store on the same backend does (redlock is compared with Latch DynamoDB); above 1x means Latch is better.';

/** The whole report as printed by `pnpm bench`: machine, one table per scenario, targets. */
export function formatReport(results: BenchResults): string {
  const { machine } = results;
  const parts = [
    `Latch bench, ${results.startedAt}${results.quick ? ' (QUICK MODE: smoke run, not a measurement)' : ''}`,
    `Machine: ${machine.cpus} x ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.platform}; all backends local.`,
    latencyLine(results.latency),
    `Run took ${formatNumber(results.durationMs / 1000, 0)} s.`,
  ];
  const s = results.scenarios;
  const subjects = results.subjects;
  if (s.uncontended) parts.push(uncontendedTable(subjects, s));
  if (s.handoff) parts.push(handoffTable(subjects, s));
  if (s['many-keys']) parts.push(manyKeysTable(subjects, s));
  if (s.renewal) parts.push(renewalTable(subjects, s));
  if (s.cost) parts.push(costTable(subjects, s));
  parts.push(RATIO_LEGEND);
  if (s.semaphore) parts.push(...semaphoreTables(subjects, s.semaphore));
  if (s.cpu) parts.push(cpuTable(subjects, s.cpu));
  if (results.targets.length > 0) {
    parts.push(
      `Targets (reported, not asserted)\n${textTable(
        ['target', 'wanted', 'measured', 'met'],
        results.targets.map((t) => [t.name, t.target, t.measured, t.met ? 'yes' : 'NO']),
      )}`,
    );
  }
  return parts.join('\n\n');
}

function rowFor<Row extends RowBase>(
  rows: readonly Row[] | undefined,
  id: SubjectId | undefined,
): Row | undefined {
  return id === undefined ? undefined : rows?.find((row) => row.subject === id);
}

function referenceOf(subject: SubjectInfo): SubjectId | undefined {
  return subject.ours ? undefined : subject.comparedTo;
}

function uncontendedTable(subjects: readonly SubjectInfo[], s: Scenarios): string {
  const rows = subjects.map((subject) => {
    const row = rowFor(s.uncontended, subject.id);
    if (row?.status !== 'ok') return [subject.label, ...statusCells(row, 6)];
    const ref = rowFor(s.uncontended, referenceOf(subject));
    return [
      subject.label,
      formatNumber(row.p50Ms),
      formatNumber(row.p99Ms),
      formatNumber(row.requestsPerCycle),
      perOp(row.requests?.byOp, row.cycles),
      advantage(ref?.p50Ms, row.p50Ms, 'lower'),
      advantage(ref?.requestsPerCycle, row.requestsPerCycle, 'lower'),
    ];
  });
  return `1. Uncontended cycle: acquire + release on a fresh key, one after another\n${textTable(
    ['subject', 'p50 ms', 'p99 ms', 'requests/cycle', 'per cycle', 'Latch adv. p50', 'Latch adv. requests'],
    rows,
  )}`;
}

function handoffTable(subjects: readonly SubjectInfo[], s: Scenarios): string {
  const rows = subjects.map((subject) => {
    const row = rowFor(s.handoff, subject.id);
    if (row?.status !== 'ok') return [subject.label, ...statusCells(row, 11)];
    const ref = rowFor(s.handoff, referenceOf(subject));
    return [
      subject.label,
      formatNumber(row.handoffsPerSec, 1),
      physicalLimitCell(row),
      formatNumber(row.p50WaitMs, 1),
      formatNumber(row.p99WaitMs, 1),
      formatNumber(row.maxWaitMs, 0),
      formatNumber(row.requestsPerHandoff),
      formatNumber(row.clientCpuMsPerHandoff),
      (row.perProcess ?? []).join(' / '),
      row.processes && row.processes > 1 ? formatNumber(row.crossProcessHandoffs, 0) : '',
      advantage(ref?.handoffsPerSec, row.handoffsPerSec, 'higher'),
      advantage(ref?.requestsPerHandoff, row.requestsPerHandoff, 'lower'),
    ];
  });
  const first = s.handoff?.find((row) => row.status === 'ok');
  const window = first?.windowMs ? ` for ${formatNumber(first.windowMs / 1000, 1)} s` : '';
  return `2. Contended hand-off: 8 contenders in 2 processes on one key, each holding ~5 ms${window}; limit = 1000 / mean measured hold ms, what back-to-back holders of that length could do at most; every acquisition checked for overlap; waits include contenders still waiting at the end\n${textTable(
    [
      'subject',
      'hand-offs/s',
      'limit/s (share)',
      'p50 wait ms',
      'p99 wait ms',
      'max wait ms',
      'requests/hand-off',
      'client CPU ms',
      'per process',
      'between processes',
      'Latch adv. rate',
      'Latch adv. requests',
    ],
    rows,
  )}`;
}

/** "184 (49%)": the physical limit 1000 / mean measured hold ms, and how much of it the subject reached. */
export function physicalLimitCell(row: Pick<HandoffRow, 'physicalLimitPerSec' | 'handoffsPerSec'>): string {
  const limit = row.physicalLimitPerSec;
  if (limit === undefined || !Number.isFinite(limit) || limit <= 0) return '—';
  const share =
    row.handoffsPerSec !== undefined && Number.isFinite(row.handoffsPerSec)
      ? ` (${formatNumber((row.handoffsPerSec / limit) * 100, 0)}%)`
      : '';
  return `${formatNumber(limit, 0)}${share}`;
}

/** Which latency profile the run used, in words. */
export function latencyLine(latency: BenchResults['latency']): string {
  if (!latency || latency.profile === 'raw')
    return 'Latency profile: raw (requests go straight to the local servers).';
  const shapes = Object.entries(latency.shapes ?? {})
    .map(([op, shape]) => `${op} p50 ${shape.p50Ms} / p99 ${shape.p99Ms} ms`)
    .join(', ');
  return `Latency profile: ${latency.profile} (seed ${latency.seed}): every S3 and DynamoDB request delayed once through a proxy, log-normal: ${shapes}; redis direct.`;
}

function manyKeysTable(subjects: readonly SubjectInfo[], s: Scenarios): string {
  const rows = subjects.map((subject) => {
    const row = rowFor(s['many-keys'], subject.id);
    if (row?.status !== 'ok') return [subject.label, ...statusCells(row, 5)];
    const ref = rowFor(s['many-keys'], referenceOf(subject));
    return [
      subject.label,
      formatNumber(row.cyclesPerSec, 1),
      formatNumber(row.requestsPerCycle),
      formatNumber(row.clientCpuMsPerCycle),
      advantage(ref?.cyclesPerSec, row.cyclesPerSec, 'higher'),
      advantage(ref?.requestsPerCycle, row.requestsPerCycle, 'lower'),
    ];
  });
  return `3. Many keys: 32 concurrent workers in one process over 1,000 keys\n${textTable(
    [
      'subject',
      'cycles/s',
      'requests/cycle',
      'client CPU ms/cycle',
      'Latch adv. rate',
      'Latch adv. requests',
    ],
    rows,
  )}`;
}

function renewalTable(subjects: readonly SubjectInfo[], s: Scenarios): string {
  const rows = subjects.map((subject) => {
    const row = rowFor(s.renewal, subject.id);
    if (row?.status !== 'ok') return [subject.label, ...statusCells(row, 3)];
    const ref = rowFor(s.renewal, referenceOf(subject));
    return [
      subject.label,
      formatNumber(row.requestsPerMinute, 0),
      Object.entries(row.perMinuteByOp ?? {})
        .map(([op, count]) => `${op} ${formatNumber(count, 0)}`)
        .join(', '),
      advantage(ref?.requestsPerMinute, row.requestsPerMinute, 'lower'),
    ];
  });
  const first = s.renewal?.find((row) => row.status === 'ok');
  const window = first?.windowMs ? `, counted over ${formatNumber(first.windowMs / 1000, 0)} s` : '';
  return `4. Renewal cost: requests per minute to keep 100 locks held, each library's default renewal${window}\n${textTable(
    ['subject', 'requests/min', 'by operation', 'Latch adv.'],
    rows,
  )}`;
}

function costTable(subjects: readonly SubjectInfo[], s: Scenarios): string {
  const rows = subjects.map((subject) => {
    const row = rowFor(s.cost, subject.id);
    if (!row || (row.status !== 'ok' && row.status !== 'invalid'))
      return [subject.label, ...statusCells(row, 4)];
    const ref = rowFor(s.cost, referenceOf(subject));
    return [
      subject.label,
      formatDollars(row.usdPerMillionCycles),
      formatDollars(row.usdPerMillionHandoffs),
      formatDollars(row.usdPerMonthHolding100),
      advantage(ref?.usdPerMillionCycles, row.usdPerMillionCycles, 'lower'),
    ];
  });
  const p = PRICES;
  return `5. Cost at AWS list prices (${p.region}, as of ${p.asOf}): S3 PUT/LIST $${p.s3Standard.putCopyPostListPer1000}/1,000, GET $${p.s3Standard.getAndOtherPer1000}/1,000, DELETE free; DynamoDB on-demand $${p.dynamodbOnDemand.perMillionWriteRequestUnits}/M writes, $${p.dynamodbOnDemand.perMillionReadRequestUnits}/M reads\n${textTable(
    [
      'subject',
      '$/M uncontended cycles',
      '$/M hand-offs',
      '$/month holding 100 locks',
      'Latch adv. $/M cycles',
    ],
    rows,
  )}`;
}
