import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { isAlive, launchDemo } from './helpers/launch-demo.js';
import { until } from './helpers/until.js';

// A PATH with nothing on it: no redis-server, no java. Node itself is started by absolute path.
const EMPTY_PATH = mkdtempSync(join(tmpdir(), 'latch-demo-empty-path-'));
const NOTHING_BUT_NODE = { ...process.env, PATH: EMPTY_PATH };

interface DemoState {
  store: string;
  queueEnabled: boolean;
  notices: string[];
  locks: Array<{ key: string; holder: string | null; fencingToken: number | null }>;
  results: Array<{
    kind: string;
    passed: boolean;
    staleRejected: number;
    accepted: number;
    overlaps: number;
    peak?: number;
  }>;
}

const stateOf = async (url: string): Promise<DemoState> =>
  (await (await fetch(`${url}/api/state`)).json()) as DemoState;

describe('without Redis and Java', () => {
  test("--store memory needs nothing but Node: replicas share the launcher's store, the queue is skipped with a hint", async () => {
    const demo = await launchDemo(['--store', 'memory'], NOTHING_BUT_NODE);
    try {
      expect(demo.output()).toContain('Skipped the BullMQ queue "sync-customer"');
      expect(demo.output()).toMatch(/install.*redis/i);
      const state = await stateOf(demo.url);
      expect(state.store).toContain('in-memory store hosted by the launcher');
      expect(state.queueEnabled).toBe(false);

      // Locks work across the three processes through the one store in the launcher.
      const post = await fetch(`${demo.url}/api/burst`, { method: 'POST' });
      expect(post.status).toBe(202);
      const burst = await until(
        'the burst result',
        async () => (await stateOf(demo.url)).results.find((r) => r.kind === 'burst'),
        90_000,
      );
      expect(burst).toMatchObject({ passed: true, overlaps: 0 });
      expect(burst.staleRejected).toBeGreaterThanOrEqual(2);
      // A lock with a limit works over the same store: two exports of one customer at once, not more.
      expect((await fetch(`${demo.url}/api/exports`, { method: 'POST' })).status).toBe(202);
      const exports = await until(
        'the exports result',
        async () => (await stateOf(demo.url)).results.find((r) => r.kind === 'exports'),
        90_000,
      );
      expect(exports).toMatchObject({ passed: true, overlaps: 0, peak: 2 });

      const locks = (await stateOf(demo.url)).locks;
      expect(locks.find((l) => l.key === 'invoice/INV-1001')?.fencingToken).toBeGreaterThanOrEqual(10);
      expect(locks.find((l) => l.key === 'billing/leader')?.holder).toMatch(/^replica-\d$/);

      // The queue cannot be used, and the dashboard says why.
      const jobs = await fetch(`${demo.url}/api/jobs`, { method: 'POST' });
      expect(jobs.status).toBe(503);
      expect(((await jobs.json()) as { error: string }).error).toContain('redis-server');
      const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
      try {
        const page = await browser.newPage();
        await page.goto(demo.url);
        const button = page.getByRole('button', { name: 'Queue off (no Redis)' });
        await button.waitFor({ timeout: 30_000 });
        expect(await button.isDisabled()).toBe(true);
        expect(await page.locator('#notices').isVisible()).toBe(true);
        expect(await page.locator('#notice-list').textContent()).toContain('redis-server');
      } finally {
        await browser.close();
      }
    } finally {
      const pids = demo.childPids;
      const { code } = await demo.interrupt();
      expect(code).toBe(0);
      await until('the replicas to be gone', () => pids.every((pid) => !isAlive(pid)), 15_000);
    }
  }, 180_000);

  test('--store dynamodb without Java says what it skipped and runs on the local S3 server', async () => {
    const demo = await launchDemo(['--store', 'dynamodb'], NOTHING_BUT_NODE);
    try {
      expect(demo.output()).toContain('Skipped DynamoDB Local');
      expect(demo.output()).toContain('Install a Java runtime (17+)');
      expect(demo.output()).toMatch(/^Lock store: local S3 server with conditional writes/m);
      await until(
        'a leader elected on the fallback store',
        async () => (await stateOf(demo.url)).locks.find((l) => l.key === 'billing/leader' && l.holder),
        60_000,
      );
    } finally {
      const { code } = await demo.interrupt();
      expect(code).toBe(0);
    }
  }, 150_000);
});
