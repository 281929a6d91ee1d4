// BullMQ 6 + ioredis + @latch/bullmq's withLock: the worker (worker.ts) enqueues jobs of one
// key, two workers take them, and this checks they all completed, one at a time.
import { CheckFailure, expect, run } from '../lib.mjs';

const here = new URL('./', import.meta.url);

export const bullmqApp = {
  name: 'bullmq',
  template: here,
  files: ['package.json', 'tsconfig.json'],
  sources: [[new URL('worker.ts', here), 'src/main.ts']],
  tarballs: ['core', 'bullmq'],
  compile: [{ project: 'tsconfig.json', label: 'bullmq' }],
  check: checkBullmq,
};

async function checkBullmq({ dir, line, env, label }) {
  const worker = await run(line.node, ['dist/main.js'], { cwd: dir, env, label, timeoutMs: 60_000 });
  const output = `${worker.stdout}\n${worker.stderr}`.trim().split('\n').slice(-10).join('\n    ');
  if (worker.timedOut) throw new CheckFailure(`the worker did not finish within 60 s:\n    ${output}`);
  const resultLine = worker.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  expect(resultLine, `no RESULT line (exit code ${worker.code}):\n    ${output}`);
  const result = JSON.parse(resultLine.slice('RESULT '.length));
  const { jobs, counts, maxActive, runs, failures } = result;
  expect(
    counts.completed === jobs && counts.failed === 0 && failures.length === 0,
    `${counts.completed} of ${jobs} jobs completed, ${counts.failed} failed: ${failures.join('; ')}`,
  );
  expect(maxActive === 1, `up to ${maxActive} jobs of the same key ran at once`);
  const byStart = [...runs].sort((a, b) => a.start - b.start);
  for (let i = 1; i < byStart.length; i++) {
    const [before, after] = [byStart[i - 1], byStart[i]];
    expect(after.start >= before.end, `job ${after.n} started before job ${before.n} ended`);
    expect(
      after.fencingToken > before.fencingToken,
      `fencing tokens did not increase: job ${before.n} had ${before.fencingToken}, job ${after.n} ${after.fencingToken}`,
    );
  }
  expect(worker.code === 0, `the worker exited with code ${worker.code} after its jobs:\n    ${output}`);
  const perWorker = [...new Set(runs.map((r) => r.worker))]
    .sort()
    .map((name) => `${name}×${runs.filter((r) => r.worker === name).length}`)
    .join(', ');
  const tokens = byStart.map((r) => r.fencingToken);
  return (
    `${jobs} jobs of one key completed on 2 workers (${perWorker}), one at a time, fencing tokens ` +
    `${tokens.join(',')}; shut down cleanly in ${(worker.ms / 1000).toFixed(1)} s`
  );
}
