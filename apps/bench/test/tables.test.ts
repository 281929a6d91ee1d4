import { describe, expect, test } from 'vitest';
import { cpuTable } from '../src/report/cpu-table.js';
import { latencyLine, physicalLimitCell } from '../src/report/format-report.js';
import { cpuRow } from '../src/scenarios/cpu.js';
import { subjectInfo } from '../src/subjects/catalog.js';

describe('physical limit next to the hand-off rate', () => {
  test('the limit 1000 / hold ms and the share of it reached', () => {
    expect(physicalLimitCell({ physicalLimitPerSec: 200, handoffsPerSec: 97.5 })).toBe('200 (49%)');
    expect(physicalLimitCell({ physicalLimitPerSec: 200 })).toBe('200');
    expect(physicalLimitCell({ handoffsPerSec: 97.5 })).toBe('—');
  });
});

describe('latency line', () => {
  test('names the profile, its seed and shapes, or says the run was raw', () => {
    expect(latencyLine(undefined)).toContain('raw');
    expect(latencyLine({ profile: 'raw' })).toContain('raw');
    const line = latencyLine({ profile: 'aws', seed: 3, shapes: { 's3-get': { p50Ms: 20, p99Ms: 80 } } });
    expect(line).toContain('aws (seed 3)');
    expect(line).toContain('s3-get p50 20 / p99 80 ms');
  });
});

describe('CPU per uncontended cycle', () => {
  const output = {
    scenario: 'cpu' as const,
    ways: [
      { label: 'Latch acquire + release', cycles: 100, cpuMs: 500, wallMs: 900 },
      { label: 'PutObject x 2', cycles: 100, cpuMs: 400, wallMs: 800 },
      { label: 'PUT x 2', cycles: 100, cpuMs: 50, wallMs: 600 },
    ],
    latchRequests: 200,
  };

  test('per cycle figures and Latch share on top of the SDK', () => {
    expect(cpuRow('latch-s3', output)).toMatchObject({
      subject: 'latch-s3',
      status: 'ok',
      requestsPerCycle: 2,
      latch: { cpuMsPerCycle: 5, wallMsPerCycle: 9 },
      sdk: { cpuMsPerCycle: 4, label: 'PutObject x 2' },
      http: { cpuMsPerCycle: 0.5 },
      latchOverSdkMs: 1,
      latchShare: 0.2,
    });
  });

  test('a way with no cycle makes a failed row, not a division by zero', () => {
    const broken = { ...output, ways: [output.ways[0]!, { ...output.ways[1]!, cycles: 0 }, output.ways[2]!] };
    expect(cpuRow('latch-s3', broken)).toMatchObject({ status: 'failed' });
  });

  test('the table shows the three ways, the extra and the share', () => {
    const text = cpuTable(
      [subjectInfo('latch-s3'), subjectInfo('latch-dynamodb')],
      [cpuRow('latch-s3', output), { subject: 'latch-dynamodb', status: 'failed', note: 'boom' }],
    );
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^9\. CPU per uncontended cycle/);
    expect(lines[1]).toMatch(
      /store\s+requests\/cycle\s+Latch ms\s+bare SDK v3 ms\s+raw HTTP ms\s+Latch over SDK ms\s+Latch share/,
    );
    expect(lines[3]).toMatch(/^Latch S3\s+2\s+5\s+4 {2}PutObject x 2\s+0\.5\s+1\s+20%\s+100$/);
    expect(lines[4]).toMatch(/^Latch DynamoDB\s+FAILED: boom$/);
  });
});
