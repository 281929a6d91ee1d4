import { describe, expect, test } from 'vitest';
import { formatReport } from '../src/report/format-report.js';
import type { BenchResults, SemaphoreRow } from '../src/results.js';
import {
  type SemaphoreContentionRun,
  summarizeSemaphoreContention,
} from '../src/scenarios/semaphore-contention.js';
import { type SubjectId, subjectInfo } from '../src/subjects/catalog.js';
import { judgeRun } from '../src/verdict.js';
import type { Acquisition, ContentionOutput } from '../src/worker-protocol.js';

const acquisition = (holder: string, acquiredAt: number, releasedAt: number): Acquisition => ({
  key: 'k',
  holder,
  acquiredAt,
  releasedAt,
  waitMs: 2,
});

function output(acquisitions: Acquisition[]): ContentionOutput {
  return {
    scenario: 'semaphore',
    acquisitions,
    unfinishedWaitsMs: [],
    requests: { total: 8, byOp: { PutObject: 8 } },
    releaseErrors: 0,
    cpuMs: 4,
  };
}

/** Two processes on one key with limit 3; process 1's second contender came in as a 4th holder. */
function run(fourth: Acquisition): SemaphoreContentionRun {
  return {
    limit: 3,
    holdMs: 5,
    tasks: [
      { contenders: 4, processIndex: 0 },
      { contenders: 4, processIndex: 1 },
    ],
    outputs: [
      output([acquisition('p0c0', 100, 105), acquisition('p0c1', 101, 106)]),
      output([acquisition('p1c0', 102, 107), fourth]),
    ],
    startAt: 0,
    endAt: 1000,
  };
}

function results(rows: SemaphoreRow[]): BenchResults {
  return {
    schema: 'latch-bench/1',
    startedAt: '2026-11-24T12:00:00.000Z',
    durationMs: 1000,
    quick: true,
    machine: { cpus: 2, cpuModel: 'Test CPU', memoryGiB: 24, node: 'v20.0.0', platform: 'linux x64' },
    prices: {},
    subjects: rows.map((row) => subjectInfo(row.subject)),
    scenarios: { semaphore: rows },
    targets: [],
  };
}

function rowOf(subject: SubjectId, stats: ReturnType<typeof summarizeSemaphoreContention>): SemaphoreRow {
  return {
    subject,
    status: stats.status,
    ...(stats.note ? { note: stats.note } : {}),
    contention: [stats],
  };
}

describe('semaphore contention summary', () => {
  test('4 holders at once with limit 3 make the result invalid', () => {
    const stats = summarizeSemaphoreContention(run(acquisition('p1c1', 103, 108)));
    expect(stats.status).toBe('invalid');
    expect(stats.holders).toMatchObject({ maxHolders: 4, count: 1 });
    expect(stats.note).toBe('1 acquisition(s) beyond limit 3: 4 held one key at the same time');
  });

  test('3 holders at once with limit 3 are valid, and the numbers are per acquisition', () => {
    const stats = summarizeSemaphoreContention(run(acquisition('p1c1', 105, 110)));
    expect(stats.status).toBe('ok');
    expect(stats.holders).toEqual({ maxHolders: 3, count: 0, examples: [] });
    expect(stats).toMatchObject({
      acquisitions: 4,
      acquisitionsPerSec: 4,
      physicalLimitPerSec: 600,
      requestsPerAcquisition: 4, // 16 requests over 4 acquisitions
      perProcess: [2, 2],
      clientCpuMsPerAcquisition: 2,
      contenders: 8,
      processes: 2,
    });
  });

  test('Latch over its limit fails the bench, as an overlap does; a peer over it is only reported', () => {
    const stats = summarizeSemaphoreContention(run(acquisition('p1c1', 103, 108)));
    const ours = judgeRun(results([rowOf('latch-s3', stats)]));
    expect(ours.failures.map((row) => row.subject)).toEqual(['latch-s3']);
    const peer = judgeRun(results([rowOf('s3-get-put', stats)]));
    expect(peer.failures).toEqual([]);
    expect(peer.peerInvalid.map((row) => row.subject)).toEqual(['s3-get-put']);
    const valid = summarizeSemaphoreContention(run(acquisition('p1c1', 105, 110)));
    expect(judgeRun(results([rowOf('latch-s3', valid)])).failures).toEqual([]);
  });

  test('the report shows a run over the limit as INVALID, never its rate', () => {
    const invalid = summarizeSemaphoreContention(run(acquisition('p1c1', 103, 108)));
    const text = formatReport(results([rowOf('latch-s3', invalid)]));
    const line = text.split('\n').find((l) => l.startsWith('Latch S3') && l.includes('limit 3'));
    expect(line).toMatch(/INVALID: 1 acquisition\(s\) beyond limit 3/);
    expect(line).not.toContain('600');
  });

  test('the report puts limit 1 and limit 3 side by side, and names subjects without semaphores', () => {
    const valid = summarizeSemaphoreContention(run(acquisition('p1c1', 105, 110)));
    const text = formatReport(
      results([
        rowOf('latch-s3', valid),
        { subject: 'redlock', status: 'not-applicable', note: subjectInfo('redlock').noSemaphore! },
      ]),
    );
    expect(text).toContain('7. Semaphores, contended: 8 contenders in 2 processes on one key');
    const line = text.split('\n').find((l) => l.startsWith('Latch S3') && l.includes('limit 3'));
    expect(line).toMatch(/limit 3\s+4\s+600\s/);
    expect(line).toContain('3 of 3');
    expect(line).toContain('2 / 2');
    expect(text).toContain(
      'Not run for semaphores (no semaphore (limit > 1) in the library: redlock (Redis)).',
    );
  });
});
