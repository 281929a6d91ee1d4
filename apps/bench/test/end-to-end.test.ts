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
const QUICK_ARGS = [
  '--quick',
  '--scenarios',
  'handoff,semaphore',
  '--subjects',
  'latch-memory,latch-s3,s3-get-put',
];

describe('a quick end-to-end run of the hand-off and semaphore scenarios', () => {
  let out: string;
  let stdout: string;
  let results: BenchResults;

  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'latch-bench-'));
    ({ stdout } = await run('node', ['dist/main.js', ...QUICK_ARGS, '--out', out], {
      cwd: packageDir,
      timeout: 240_000,
    }));
    results = JSON.parse(await readFile(join(out, 'latest.json'), 'utf8')) as BenchResults;
  }, 270_000);
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

  test('prints the semaphore tables, limit 1 beside limit 3, without the peer', () => {
    expect(stdout).toContain('6. Semaphores, uncontended');
    expect(stdout).toContain('7. Semaphores, contended');
    expect(stdout).toContain(
      'Not run for semaphores (no semaphore (limit > 1) in the library: S3 GET+PUT loop).',
    );
    expect(stdout).toContain('8. Semaphores, renewal');
    const contended = stdout.slice(stdout.indexOf('7. Semaphores, contended'));
    expect(contended).toMatch(/Latch S3\s+limit 1/);
    expect(contended).toMatch(/Latch S3\s+limit 3/);
  });

  test('measures semaphores: acquire and release counted apart, holders within the limit', () => {
    const rows = results.scenarios.semaphore!;
    expect(rows.map((row) => [row.subject, row.status])).toEqual([
      ['latch-memory', 'ok'],
      ['latch-s3', 'ok'],
      ['s3-get-put', 'not-applicable'],
    ]);
    for (const row of rows.slice(0, 2)) {
      expect(row.cycles!.map((c) => c.label)).toEqual([
        "limit 1 (today's lock)",
        'limit 3',
        'limit 1, 2 clients in turn',
        'limit 3, 2 clients in turn',
        'acquireAll, 2 keys',
      ]);
      for (const cycle of row.cycles!) {
        expect(cycle.cycles).toBeGreaterThan(0);
        expect(cycle.acquireP99Ms).toBeGreaterThanOrEqual(cycle.acquireP50Ms);
      }
      expect(row.contention!.map((c) => c.limit)).toEqual([1, 3]);
      for (const stats of row.contention!) {
        expect(stats.status).toBe('ok');
        expect(stats.acquisitions).toBeGreaterThan(0);
        expect(stats.holders.count).toBe(0);
        expect(stats.holders.maxHolders).toBeGreaterThanOrEqual(1);
        expect(stats.holders.maxHolders).toBeLessThanOrEqual(stats.limit);
        expect(stats.physicalLimitPerSec).toBe(stats.limit * 200);
      }
    }
    // Renewals are counted, for holders alone on their keys and for 10 sharing each record; none lost.
    for (const row of rows.slice(0, 2)) {
      expect(row.renewal!.map((r) => [r.limit, r.keys, r.holders])).toEqual([
        [1, 30, 30],
        [10, 3, 30],
      ]);
      for (const r of row.renewal!) {
        expect(r.renewals).toBeGreaterThan(0);
        expect(r.requestsPerRenewal).toBeGreaterThan(0);
        expect(r.lost).toBe(0);
      }
    }
    // The limit reaches the store: 8 contenders in one process, each holding 5 ms, share the 3 places.
    const memory = rows.find((row) => row.subject === 'latch-memory')!;
    expect(memory.contention!.find((c) => c.limit === 3)!.holders.maxHolders).toBeGreaterThan(1);
    // One client on one key of S3: the acquire is one conditional PUT, the release another, for
    // limit 1 and limit 3 alike; acquireAll of 2 keys is one PUT per key each way.
    const s3 = rows.find((row) => row.subject === 'latch-s3')!;
    const byLabel = (label: string) => s3.cycles!.find((c) => c.label === label)!;
    for (const label of ["limit 1 (today's lock)", 'limit 3']) {
      expect(byLabel(label)).toMatchObject({ requestsPerAcquire: 1, requestsPerRelease: 1 });
      expect(byLabel(label).usdPerMillionCycles).toBeCloseTo(10, 9);
    }
    expect(byLabel('acquireAll, 2 keys')).toMatchObject({ requestsPerAcquire: 2, requestsPerRelease: 2 });
    // After the other client's writes the first PUT is refused: read the record, write again.
    expect(byLabel('limit 3, 2 clients in turn')).toMatchObject({
      requestsPerAcquire: 3,
      requestsPerRelease: 1,
    });
  });

  test('writes the chart', async () => {
    const chart = await readFile(join(out, 'chart.svg'), 'utf8');
    expect(chart.startsWith('<svg')).toBe(true);
    expect(chart).toContain('Contended hand-offs per second');
    expect(chart).toContain('S3 GET+PUT loop');
  });
});
