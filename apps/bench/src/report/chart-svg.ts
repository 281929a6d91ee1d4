import type { BenchResults, RowBase, RowStatus } from '../results.js';
import type { SubjectInfo } from '../subjects/catalog.js';
import { formatDollars, formatNumber } from './format-number.js';

/** One bar: a subject's value in one panel, or why it has none. */
interface Bar {
  subject: SubjectInfo;
  value?: number;
  text: string;
  status: RowStatus | 'not run';
}

interface Panel {
  title: string;
  bars: Bar[];
  /** Log scale when in-process subjects would flatten every other bar. */
  scale: 'linear' | 'log';
}

const WIDTH = 960;
const LABEL_WIDTH = 300;
const BAR_AREA = 520;
const ROW_HEIGHT = 22;
const PANEL_TITLE_HEIGHT = 34;
const PANEL_GAP = 18;
const COLORS = { ours: '#1b7f79', peer: '#8c8c8c', invalid: '#c62828' };

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function barsFrom<Row extends RowBase>(
  subjects: readonly SubjectInfo[],
  rows: readonly Row[] | undefined,
  value: (row: Row) => number | null | undefined,
  format: (value: number) => string,
): Bar[] {
  return subjects.map((subject) => {
    const row = rows?.find((r) => r.subject === subject.id);
    if (!row) return { subject, text: 'not run', status: 'not run' };
    const v = value(row);
    if (row.status === 'invalid')
      return { subject, value: v ?? undefined, text: 'INVALID: overlap', status: row.status };
    if (row.status !== 'ok' || v === null || v === undefined || !Number.isFinite(v)) {
      return { subject, text: row.status === 'ok' ? 'n/a' : row.status, status: row.status };
    }
    return { subject, value: v, text: format(v), status: row.status };
  });
}

/** The panels drawn from whatever scenarios a run has. */
function panelsOf(results: BenchResults): Panel[] {
  const { subjects, scenarios: s } = results;
  const panels: Panel[] = [];
  if (s.handoff) {
    panels.push({
      title: 'Contended hand-offs per second (8 contenders, 2 processes, one key) — higher is better',
      scale: 'linear',
      bars: barsFrom(
        subjects,
        s.handoff,
        (r) => r.handoffsPerSec,
        (v) => formatNumber(v, 1),
      ),
    });
  }
  if (s['many-keys']) {
    panels.push({
      title: 'Cycles per second, 32 workers over 1,000 keys (log scale) — higher is better',
      scale: 'log',
      bars: barsFrom(
        subjects,
        s['many-keys'],
        (r) => r.cyclesPerSec,
        (v) => formatNumber(v, 1),
      ),
    });
  }
  if (s.uncontended) {
    panels.push({
      title: 'Store requests per uncontended acquire + release — lower is better',
      scale: 'linear',
      bars: barsFrom(
        subjects,
        s.uncontended,
        (r) => r.requestsPerCycle,
        (v) => formatNumber(v, 2),
      ),
    });
  }
  if (s.cost) {
    panels.push({
      title: 'US$ per million uncontended cycles at AWS list prices — lower is better',
      scale: 'linear',
      bars: barsFrom(subjects, s.cost, (r) => r.usdPerMillionCycles, formatDollars),
    });
  }
  return panels;
}

/** A self-contained SVG bar chart of a run: one panel per headline metric, Latch in teal. */
export function renderChart(results: BenchResults): string {
  const panels = panelsOf(results);
  const parts: string[] = [];
  let y = 60;
  for (const panel of panels) {
    parts.push(`<text x="20" y="${y + 20}" class="title">${escapeXml(panel.title)}</text>`);
    y += PANEL_TITLE_HEIGHT;
    const scaled = (value: number) => (panel.scale === 'log' ? Math.log10(1 + value) : value);
    const max = Math.max(0, ...panel.bars.map((bar) => scaled(bar.value ?? 0)));
    for (const bar of panel.bars) {
      const label = `${escapeXml(bar.subject.label)}`;
      parts.push(`<text x="${LABEL_WIDTH - 10}" y="${y + 15}" class="label">${label}</text>`);
      const width =
        bar.value !== undefined && max > 0 ? Math.max(1, (scaled(bar.value) / max) * BAR_AREA) : 0;
      const color = bar.status === 'invalid' ? COLORS.invalid : bar.subject.ours ? COLORS.ours : COLORS.peer;
      if (width > 0) {
        parts.push(
          `<rect x="${LABEL_WIDTH}" y="${y + 3}" width="${width.toFixed(1)}" height="${ROW_HEIGHT - 6}" fill="${color}" />`,
        );
      }
      const textClass = bar.status === 'invalid' ? 'value invalid' : 'value';
      parts.push(
        `<text x="${(LABEL_WIDTH + width + 6).toFixed(1)}" y="${y + 15}" class="${textClass}">${escapeXml(bar.text)}</text>`,
      );
      y += ROW_HEIGHT;
    }
    y += PANEL_GAP;
  }
  const m = results.machine;
  const heading = `Latch vs peer lock libraries — ${results.startedAt.slice(0, 10)}${results.quick ? ' (quick smoke run)' : ''}`;
  const machine = `${m.cpus} cores (${m.cpuModel}), Node ${m.node}, all backends local (S3 server, DynamoDB Local, redis-server)`;
  const height = y + 10;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif">`,
    '<style>.title{font-size:14px;font-weight:bold;fill:#222}.label{font-size:12px;fill:#333;text-anchor:end}.value{font-size:12px;fill:#222}.invalid{fill:#c62828;font-weight:bold}.heading{font-size:18px;font-weight:bold}.sub{font-size:12px;fill:#555}</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff" />`,
    `<text x="20" y="26" class="heading">${escapeXml(heading)}</text>`,
    `<text x="20" y="46" class="sub">${escapeXml(machine)}</text>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}
