import { mkdirSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isAlive, launchDemo, type RunningDemo } from './helpers/launch-demo.js';
import { until } from './helpers/until.js';

// The whole demo, as `pnpm demo` runs it (local S3 server, Redis, three replicas), driven
// through its dashboard in real headless Chromium.

const OUTPUT_DIR = new URL('../test-output/', import.meta.url);
const UI_WAIT_MS = 60_000;

let browser: Browser;
let demo: RunningDemo;
let page: Page;

beforeAll(async () => {
  mkdirSync(OUTPUT_DIR, { recursive: true });
  [browser, demo] = await Promise.all([
    chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], headless: true }),
    launchDemo(['--store', 's3']),
  ]);
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(demo.url);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (demo && demo.child.exitCode === null && demo.child.signalCode === null) {
    demo.child.kill('SIGKILL');
  }
});

const leaderRow = () => page.locator('tr[data-key="billing/leader"]');
const timelineOf = (replica: string) => page.locator(`[data-timeline="${replica}"]`);
/** Hold bars of the timeline chart; their aria-labels say who held what and how it began. */
const holdBars = (selector = '') => page.locator(`#hold-timeline li.hold${selector}`);

/** The text a sighted reader sees in `selector`: without the visually hidden announcements. */
const visibleText = (selector: string): Promise<string> =>
  page.evaluate(`(() => {
    const copy = document.querySelector(${JSON.stringify(selector)}).cloneNode(true);
    for (const hidden of copy.querySelectorAll('.visually-hidden')) hidden.remove();
    return copy.textContent;
  })()`);

describe('the dashboard', () => {
  test('shows three live replicas, the elected leader and the nightly report run once per tick', async () => {
    await expect
      .poll(() => page.locator('#connection').textContent(), { timeout: UI_WAIT_MS })
      .toContain('Live');
    await expect
      .poll(() => page.locator('[data-replica] [data-status="up"]').count(), { timeout: UI_WAIT_MS })
      .toBe(3);
    expect(await page.locator('#store').textContent()).toContain('local S3 server with conditional writes');
    // The terminal's guided scenario names buttons the dashboard really has.
    expect(demo.output()).toContain('Try this:');
    for (const button of [
      'Fire 20 parallel charges',
      'Enqueue 30 jobs over 3 customers',
      'Start 8 exports for customer acme',
    ]) {
      expect(demo.output()).toContain(`Press "${button}"`);
      expect(await page.getByRole('button', { name: button, exact: true }).count()).toBe(1);
    }
    expect(demo.output()).toMatch(/Kill the replica holding "billing\/leader"/);
    await expect
      .poll(() => leaderRow().getAttribute('data-holder'), { timeout: UI_WAIT_MS })
      .toMatch(/^replica-\d$/);

    // Every replica's scheduler fires; one runs the report, at least one other finds it held and skips.
    await expect
      .poll(() => page.locator('li[data-type="acquired"][data-key="reports/nightly"]').count(), {
        timeout: UI_WAIT_MS,
      })
      .toBeGreaterThan(0);
    await expect
      .poll(() => page.locator('li[data-type="contended"][data-key="reports/nightly"]').count(), {
        timeout: UI_WAIT_MS,
      })
      .toBeGreaterThan(0);
  }, 90_000);

  test('a burst of 20 charges: no two holders overlap and the ledger rejects the stale late writes', async () => {
    await page.getByRole('button', { name: 'Fire 20 parallel charges' }).click();
    const result = page.locator('li[data-kind="burst"][data-number="1"]');
    await result.waitFor({ timeout: 90_000 });

    expect(await result.getAttribute('data-passed')).toBe('true');
    expect(await result.getAttribute('data-overlaps')).toBe('0');
    const staleRejected = Number(await result.getAttribute('data-stale-rejected'));
    // Two writes per invoice are held back; at most one of them can be the invoice's last charge.
    expect(staleRejected).toBeGreaterThanOrEqual(2);
    const text = await result.textContent();
    expect(text).toContain('no two holders overlapped (20 charges checked');
    expect(text).toContain(`the ledger rejected ${staleRejected} stale writes`);
    // The announcement for screen readers says the same; on screen the result shows once, in the list.
    expect(await page.locator('#result-announcement').textContent()).toContain('Burst #1: Passed');
    const checks = await visibleText('section:has(> #checks-title)');
    expect(checks.split('no two holders overlapped (20 charges checked')).toHaveLength(2);

    // The page shows what the ledger itself counted.
    const state = (await (await fetch(`${demo.url}/api/state`)).json()) as {
      ledger: { staleRejected: number };
    };
    expect(state.ledger.staleRejected).toBe(staleRejected);

    // Lock table: both invoices were locked 10 times each (tokens never go back), and are free now.
    for (const invoice of ['invoice/INV-1001', 'invoice/INV-1002']) {
      const row = page.locator(`tr[data-key="${invoice}"]`);
      await expect.poll(() => row.getAttribute('data-holder'), { timeout: UI_WAIT_MS }).toBe('');
      expect(Number(await row.getAttribute('data-token'))).toBeGreaterThanOrEqual(10);
    }

    // Timeline: the charges ran on more than one replica, and charges waited for each other.
    let replicasThatCharged = 0;
    for (const replica of ['replica-1', 'replica-2', 'replica-3']) {
      const acquired = timelineOf(replica).locator('li[data-type="acquired"][data-key^="invoice/"]');
      if ((await acquired.count()) > 0) replicasThatCharged++;
    }
    expect(replicasThatCharged).toBeGreaterThanOrEqual(2);
    expect(await page.locator('li[data-type="waiting"][data-key^="invoice/"]').count()).toBeGreaterThan(0);

    // Timeline chart: each invoice's lane shows its holds, and the lock handed over from a
    // releasing holder to a waiting one.
    const handovers = holdBars('[data-key^="invoice/"][data-began="handover"]');
    await expect.poll(() => handovers.count(), { timeout: UI_WAIT_MS }).toBeGreaterThan(0);
    expect(await handovers.first().getAttribute('aria-label')).toMatch(
      /^replica-\d · token \d+ · invoice\/INV-100\d: hand-over from replica-\d \(token \d+\), \d+ ms after its release; held /,
    );
    expect(
      await page.locator('#hold-timeline [data-lane^="invoice/"] li.wait[data-outcome="acquired"]').count(),
    ).toBeGreaterThan(0);
    await expect.poll(() => page.locator('#burst').isEnabled()).toBe(true);
  }, 120_000);

  test('30 jobs over 3 customers: all complete, jobs of one customer never overlap', async () => {
    await page.getByRole('button', { name: 'Enqueue 30 jobs over 3 customers' }).click();
    const result = page.locator('li[data-kind="jobs"][data-number="1"]');
    await result.waitFor({ timeout: 120_000 });
    expect(await result.getAttribute('data-passed')).toBe('true');
    expect(await result.textContent()).toContain('30 of 30 completed, 0 failed');
    expect(await page.locator('li[data-type="acquired"][data-key^="customer/"]').count()).toBeGreaterThan(0);
  }, 150_000);

  test('8 exports of one customer under limit 2: the page shows 2 holders with their tokens, never more', async () => {
    // Records every rendering of the export lock's row: how many holders, their tokens, the waiters.
    await page.evaluate(`(() => {
      const seen = (window.exportRow = []);
      const record = () => {
        const row = document.querySelector('tr[data-key="export/customer-acme"]');
        if (!row) return;
        seen.push({
          count: Number(row.getAttribute('data-holder-count')),
          tokens: [...row.querySelectorAll('[data-holder-token]')].map((li) => li.getAttribute('data-holder-token')),
          waiters: row.querySelector('[data-col="waiters"]').textContent,
        });
      };
      new MutationObserver(record).observe(document.querySelector('#locks tbody'), { childList: true });
    })()`);
    await page.getByRole('button', { name: 'Start 8 exports for customer acme' }).click();
    await page
      .locator('tr[data-key="export/customer-acme"][data-holder-count="2"]')
      .waitFor({ timeout: UI_WAIT_MS });
    await page.screenshot({ path: new URL('exports.png', OUTPUT_DIR).pathname, fullPage: true });

    const result = page.locator('li[data-kind="exports"][data-number="1"]');
    await result.waitFor({ timeout: 120_000 });
    expect(await result.getAttribute('data-passed')).toBe('true');
    expect(await result.getAttribute('data-overlaps')).toBe('0');
    // The work log saw two exports inside at once: the limit let two in, not one.
    expect(await result.getAttribute('data-peak')).toBe('2');
    expect(await result.textContent()).toContain('8 of 8 completed, 0 failed');

    const seen = (await page.evaluate('window.exportRow')) as Array<{
      count: number;
      tokens: string[];
      waiters: string;
    }>;
    expect(seen.length).toBeGreaterThan(0);
    expect(Math.max(...seen.map((row) => row.count))).toBe(2);
    // Two holders at once, each with its own fencing token; others waiting meanwhile.
    const full = seen.filter((row) => row.count === 2);
    for (const row of full) expect(new Set(row.tokens).size).toBe(2);
    expect(seen.some((row) => row.waiters !== '—')).toBe(true);
    await expect.poll(() => page.locator('#exports').isEnabled()).toBe(true);
  }, 150_000);

  test('killing the leader: its lease runs out and another replica takes over with a higher token', async () => {
    await page.getByRole('button', { name: 'Fire 20 parallel charges' }).waitFor();
    const holder = await until(
      'a leader',
      async () => (await leaderRow().getAttribute('data-holder')) || undefined,
    );
    const token = Number(await leaderRow().getAttribute('data-token'));

    await page.getByRole('button', { name: `Kill ${holder}` }).click();
    await expect
      .poll(() => page.locator(`[data-replica="${holder}"] [data-status]`).getAttribute('data-status'), {
        timeout: UI_WAIT_MS,
      })
      .toBe('killed');
    // A killed process renews nothing: this is when its lease ends.
    const expiresAt = Number(await leaderRow().getAttribute('data-expires-at'));

    await expect
      .poll(async () => Number(await leaderRow().getAttribute('data-token')), { timeout: UI_WAIT_MS })
      .toBeGreaterThan(token);
    const successor = (await leaderRow().getAttribute('data-holder'))!;
    expect(successor).toMatch(/^replica-\d$/);
    expect(successor).not.toBe(holder);

    // The successor took over only once the dead leader's lease had expired.
    const takeover = timelineOf(successor)
      .locator('li[data-type="acquired"][data-key="billing/leader"]')
      .first()
      .locator('time');
    const takenAt = Date.parse((await takeover.getAttribute('datetime'))!);
    expect(takenAt).toBeGreaterThanOrEqual(expiresAt);

    // Timeline chart: the dead leader's hold ends unreleased, and the successor's hold is marked a takeover.
    const takeoverBar = holdBars(
      `[data-key="billing/leader"][data-began="takeover"][data-replica="${successor}"]`,
    );
    await expect.poll(() => takeoverBar.count(), { timeout: UI_WAIT_MS }).toBeGreaterThan(0);
    expect(await takeoverBar.last().getAttribute('aria-label')).toContain(
      `${successor} · token ${await leaderRow().getAttribute('data-token')} · billing/leader: takeover from ${holder} (token ${token}), which never released it`,
    );
    expect(
      await holdBars(
        `[data-key="billing/leader"][data-replica="${holder}"][data-token="${token}"]`,
      ).getAttribute('data-ending'),
    ).toBe('expired');
    expect(await page.locator('#hold-timeline .mark[data-mark="takeover"]').count()).toBeGreaterThan(0);
    await page.locator('#holds-panel').screenshot({ path: new URL('timeline.png', OUTPUT_DIR).pathname });

    await page.screenshot({ path: new URL('dashboard.png', OUTPUT_DIR).pathname, fullPage: true });
  }, 90_000);

  test('Ctrl-C (SIGINT) stops every child process and server', async () => {
    const pids = demo.childPids;
    expect(pids.length).toBeGreaterThanOrEqual(4); // three replicas (one may be the killed one) and redis-server
    const { code } = await demo.interrupt();
    expect(code).toBe(0);
    expect(demo.output()).toContain('Stopped.');
    await until('every child process to be gone', () => pids.every((pid) => !isAlive(pid)), 15_000);
    await expect(fetch(demo.url)).rejects.toThrow();
  }, 60_000);
});
