import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { BenchResults } from '../src/results.js';

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');

// The README's smoke-run line, run against the compiled CLI (the test task builds it first).
const QUICK_ARGS = ['--quick', '--scenarios', 'handoff', '--subjects', 'latch-memory,latch-s3,s3-get-put'];

describe('a quick end-to-end run of the hand-off scenario', () => {
  let out: string;
  let stdout: string;
  let results: BenchResults;

  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'latch-bench-'));
    ({ stdout } = await run('node', ['dist/main.js', ...QUICK_ARGS, '--out', out], {
      cwd: packageDir,
      timeout: 120_000,
    }));
    results = JSON.parse(await readFile(join(out, 'latest.json'), 'utf8')) as BenchResults;
  }, 150_000);
  afterAll(async () => {
    if (out) await rm(out, { recursive: true, force: true });
  });

  test('the README documents this very command', () => {
    expect(readme).toContain(`pnpm bench ${QUICK_ARGS.join(' ')}`);
  });

  test('prints the hand-off table', () => {
    expect(stdout).toContain('2. Contended hand-off');
    for (const label of ['Latch memory', 'Latch S3', 'S3 GET+PUT loop']) expect(stdout).toContain(label);
  });

  test('writes well-formed results: every subject measured, no overlap, requests counted', () => {
    expect(results.schema).toBe('latch-bench/1');
    expect(results.quick).toBe(true);
    expect(results.machine.cpus).toBeGreaterThan(0);
    const rows = results.scenarios.handoff!;
    expect(rows.map((row) => row.subject)).toEqual(['latch-memory', 'latch-s3', 's3-get-put']);
    for (const row of rows) {
      expect(row.status).toBe('ok');
      expect(row.overlaps?.count).toBe(0);
      expect(row.handoffs).toBeGreaterThan(0);
      expect(row.handoffsPerSec).toBeGreaterThan(0);
      expect(row.requests!.total).toBeGreaterThan(0);
      expect(row.p99WaitMs).toBeGreaterThanOrEqual(row.p50WaitMs!);
    }
    expect(rows.find((row) => row.subject === 'latch-s3')!.perProcess).toHaveLength(2);
    expect(rows.find((row) => row.subject === 'latch-memory')!.perProcess).toHaveLength(1);
    const cost = results.scenarios.cost!;
    expect(cost.find((row) => row.subject === 'latch-s3')!.usdPerMillionHandoffs).toBeGreaterThan(0);
    expect(cost.find((row) => row.subject === 'latch-memory')!.usdPerMillionHandoffs).toBe(0);
  });

  test('writes the chart', async () => {
    const chart = await readFile(join(out, 'chart.svg'), 'utf8');
    expect(chart.startsWith('<svg')).toBe(true);
    expect(chart).toContain('Contended hand-offs per second');
    expect(chart).toContain('S3 GET+PUT loop');
  });
});
