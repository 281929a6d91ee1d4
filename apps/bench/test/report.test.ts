import { describe, expect, test } from 'vitest';
import { renderChart } from '../src/report/chart-svg.js';
import { formatReport } from '../src/report/format-report.js';
import type { BenchResults } from '../src/results.js';
import { type SUBJECTS, subjectInfo } from '../src/subjects/catalog.js';
import { checkTargets } from '../src/targets.js';

/** A hand-made result: Latch DynamoDB and one peer measured, one peer overlapped. */
function sample(): BenchResults {
  const scenarios: BenchResults['scenarios'] = {
    uncontended: [
      { subject: 'latch-dynamodb', status: 'ok', cycles: 10, p50Ms: 4, p99Ms: 9, requestsPerCycle: 2 },
      { subject: 'deliveryhero', status: 'ok', cycles: 10, p50Ms: 6, p99Ms: 12, requestsPerCycle: 3 },
    ],
    handoff: [
      { subject: 'latch-dynamodb', status: 'ok', processes: 2, handoffsPerSec: 50, requestsPerHandoff: 1.5 },
      { subject: 'deliveryhero', status: 'ok', processes: 2, handoffsPerSec: 20, requestsPerHandoff: 6 },
      {
        subject: 'dynamodb-lock-client',
        status: 'invalid',
        note: '1 overlapping acquisition(s): two holders held one key at the same time',
        handoffsPerSec: 900,
      },
    ],
  };
  return {
    schema: 'latch-bench/1',
    startedAt: '2026-11-23T12:00:00.000Z',
    durationMs: 1000,
    quick: false,
    machine: { cpus: 2, cpuModel: 'Test CPU', memoryGiB: 24, node: 'v20.0.0', platform: 'linux x64' },
    prices: {},
    subjects: ['latch-dynamodb', 'deliveryhero', 'dynamodb-lock-client'].map((id) =>
      subjectInfo(id as (typeof SUBJECTS)[number]['id']),
    ),
    scenarios,
    targets: checkTargets(scenarios),
  };
}

describe('report', () => {
  test('tables show ratios against the Latch store on the same backend', () => {
    const text = formatReport(sample());
    const line = text
      .split('\n')
      .find((l) => l.startsWith('@deliveryhero/dynamodb-lock') && l.includes('20'));
    expect(line).toBeDefined();
    expect(line).toContain('2.5x'); // 50 / 20 hand-offs per second
    expect(line).toContain('4x'); // 6 / 1.5 requests per hand-off
  });

  test('an overlapping result is shown as INVALID, never as a fast number', () => {
    const results = sample();
    const text = formatReport(results);
    expect(text).toMatch(/dynamodb-lock-client\s+INVALID: 1 overlapping acquisition/);
    expect(text).not.toContain('900');
    const chart = renderChart(results);
    expect(chart).toContain('INVALID: overlap');
    expect(chart).toContain('fill="#c62828"');
  });

  test('targets compare with the best valid DynamoDB peer and say whether they were met', () => {
    const targets = sample().targets;
    expect(targets.find((t) => t.name.startsWith('DynamoDB requests'))).toMatchObject({
      measured: '2',
      met: true,
    });
    expect(targets.find((t) => t.name.startsWith('Hand-off rate on DynamoDB'))).toMatchObject({
      measured: '2.5x (50/s vs 20/s for deliveryhero)',
      met: true,
    });
  });

  test('targets for one client (share of the limit, no requests) and for the p99 wait against the best peer', () => {
    const handoff = [
      {
        subject: 'latch-memory',
        status: 'ok',
        handoffsPerSec: 170,
        physicalLimitPerSec: 184,
        requestsPerHandoff: 0.01,
      },
      { subject: 'latch-s3', status: 'ok', handoffsPerSec: 150, p99WaitMs: 1_100 },
      { subject: 's3-get-put', status: 'ok', handoffsPerSec: 80, p99WaitMs: 1_000 },
      { subject: 'latch-dynamodb', status: 'ok', handoffsPerSec: 150, p99WaitMs: 1_000 },
      { subject: 'deliveryhero', status: 'ok', handoffsPerSec: 70, p99WaitMs: 8_000 },
      { subject: 'dynamodb-lock-client', status: 'ok', handoffsPerSec: 60, p99WaitMs: 5_000 },
    ] as NonNullable<BenchResults['scenarios']['handoff']>;
    const targets = checkTargets({ handoff });
    const named = (start: string) => targets.find((t) => t.name.startsWith(start));
    expect(named('Hand-offs in one client')).toMatchObject({ measured: '92.39%, 0.01', met: true });
    expect(named('Hand-off rate on the local S3 server')).toMatchObject({
      measured: '1.88x (150/s vs 80/s for s3-get-put)',
      met: false,
    });
    expect(named('p99 wait on the local S3 server')).toMatchObject({ met: false });
    // The best p99 among the peers, not the fastest peer's.
    expect(named('p99 wait on DynamoDB Local')).toMatchObject({
      measured: '1000 ms vs 5000 ms for dynamodb-lock-client',
      met: true,
    });
    const slow = handoff.map((row) =>
      row.subject === 'latch-memory' ? { ...row, handoffsPerSec: 160 } : row,
    );
    expect(
      checkTargets({ handoff: slow }).find((t) => t.name.startsWith('Hand-offs in one client'))?.met,
    ).toBe(false);
  });

  test('the chart is one well-formed SVG document with a bar per subject', () => {
    const chart = renderChart(sample());
    expect(chart.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(chart.trim().endsWith('</svg>')).toBe(true);
    expect(chart.match(/<svg/g)).toHaveLength(1);
    expect(chart).toContain('@deliveryhero/dynamodb-lock');
    expect(chart.match(/<text /g)?.length).toBe(chart.match(/<\/text>/g)?.length);
    // The background, 3 hand-off bars (the invalid one in red) and 2 request bars.
    expect(chart.match(/<rect /g)).toHaveLength(1 + 3 + 2);
  });
});

describe('physical limit', () => {
  test('is what holders of the measured mean hold could do back to back', async () => {
    const { meanHoldMs } = await import('../src/scenarios/handoff.js');
    const holds = [
      { key: 'k', holder: 'p0c0', acquiredAt: 0, releasedAt: 5.2 },
      { key: 'k', holder: 'p0c1', acquiredAt: 6, releasedAt: 11.6 },
    ];
    expect(meanHoldMs(holds)).toBeCloseTo(5.4);
    expect(meanHoldMs([])).toBeNaN();
  });
});
