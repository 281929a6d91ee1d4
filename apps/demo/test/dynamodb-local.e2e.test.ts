import { describe, expect, test } from 'vitest';
import { isAlive, launchDemo } from './helpers/launch-demo.js';
import { until } from './helpers/until.js';

interface BurstState {
  results: Array<{ kind: string; passed: boolean; overlaps: number; staleRejected: number }>;
}

describe('--store dynamodb', () => {
  test('runs the replicas on DynamoDB Local and stops its JVM on Ctrl-C', async () => {
    const demo = await launchDemo(['--store', 'dynamodb']);
    const pids = demo.childPids;
    try {
      expect(demo.output()).toMatch(
        /^Lock store: DynamoDB Local \(http:\/\/127\.0\.0\.1:\d+, table "latch-demo-locks"\)$/m,
      );
      expect(demo.output()).toMatch(/DynamoDB Local pid \d+/);
      expect((await fetch(`${demo.url}/api/burst`, { method: 'POST' })).status).toBe(202);
      const burst = await until(
        'the burst result',
        async () =>
          ((await (await fetch(`${demo.url}/api/state`)).json()) as BurstState).results.find(
            (r) => r.kind === 'burst',
          ),
        90_000,
      );
      expect(burst).toMatchObject({ passed: true, overlaps: 0 });
      expect(burst.staleRejected).toBeGreaterThanOrEqual(2);
    } finally {
      const { code } = await demo.interrupt();
      expect(code).toBe(0);
      await until(
        'DynamoDB Local, Redis and the replicas to be gone',
        () => pids.every((pid) => !isAlive(pid)),
        15_000,
      );
    }
  }, 150_000);
});
