import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import type { Backend } from '../helpers/backends.js';
import { runCli } from '../helpers/cli-process.js';

const dir = mkdtempSync(join(tmpdir(), 'latch-cli-acquire-'));
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The `latch acquire`, `release` and `status` tests, against the backend `current()` returns. */
export function acquireReleaseScenarios(current: () => Backend): void {
  describe('latch acquire / release / status', () => {
    let backend: Backend;
    beforeAll(() => {
      backend = current();
    });

    test('acquire in one process, status and a refused acquire in others, release with the handle alone in another', async () => {
      const name = `deploy/${randomUUID()}`;
      const store = ['--store', backend.store];
      const acquired = await runCli(
        ['acquire', ...store, '--name', name, '--lease', '10m', '--context', 'pipeline 1234'],
        backend.env(),
      );
      expect(acquired).toMatchObject({ code: 0, stderr: '' });
      const output = JSON.parse(acquired.stdout);
      expect(output).toEqual({
        key: name,
        handle: expect.stringMatching(/^latch1\./),
        fencingToken: backend.counterTokens ? 1 : expect.any(Number),
        acquiredAt: expect.stringMatching(ISO),
        expiresAt: expect.stringMatching(ISO),
      });
      expect(Date.parse(output.expiresAt) - Date.parse(output.acquiredAt)).toBe(10 * 60_000);
      // The acquiring process has exited; the lock stays held.
      expect(await backend.locks.inspect(name)).toMatchObject({ state: 'held', context: 'pipeline 1234' });

      const human = await runCli(['status', ...store, '--name', name], backend.env());
      expect(human.code).toBe(0);
      expect(human.stdout.split('\n')).toEqual([
        `lock "${name}": held`,
        expect.stringMatching(/^ {2}holder: {8}\S+$/),
        '  context:       pipeline 1234',
        expect.stringMatching(/^ {2}since: {9}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(\S+ ago\)$/),
        expect.stringMatching(/^ {2}lease ends: {4}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(in \d+m\d*s?\)$/),
        `  fencing token: ${output.fencingToken}`,
        '',
      ]);
      const json = await runCli(['status', ...store, '--name', name, '--json'], backend.env());
      expect(JSON.parse(json.stdout)).toEqual({
        key: name,
        state: 'held',
        fencingToken: output.fencingToken,
        owner: expect.any(String),
        context: 'pipeline 1234',
        acquiredAt: output.acquiredAt,
        expiresAt: output.expiresAt,
      });

      const refused = await runCli(['acquire', ...store, '--name', name, '--wait', '0'], backend.env());
      expect(refused.code).toBe(3);
      expect(refused.stdout).toBe('');
      const holder = 'pipeline 1234 \\(.+\\), since .+, lease ends .+';
      expect(refused.stderr).toMatch(new RegExp(`^latch acquire: lock "${name}" is held by ${holder}\\n$`));
      const gaveUp = await runCli(['acquire', ...store, '--name', name, '--wait', '1s'], backend.env());
      expect(gaveUp.code).toBe(3);
      expect(gaveUp.stderr.split('\n')).toEqual([
        expect.stringMatching(
          new RegExp(`^latch acquire: waiting up to 1s for lock "${name}", held by ${holder}$`),
        ),
        expect.stringMatching(
          new RegExp(`^latch acquire: gave up after waiting 1s: lock "${name}" is held by ${holder}$`),
        ),
        '',
      ]);

      // Another process, knowing only the handle: it names the lock, on every store.
      const byHandle = ['release', ...store, '--handle', output.handle];
      const released = await runCli(byHandle, backend.env());
      expect(released).toMatchObject({ code: 0, stdout: `released lock "${name}"\n` });
      const free = await runCli(['status', ...store, '--name', name, '--json'], backend.env());
      expect(JSON.parse(free.stdout)).toEqual({ key: name, state: 'free', fencingToken: expect.any(Number) });
      expect(await backend.locks.inspect(name)).toMatchObject({ state: 'free' });

      // Released twice (a re-run of the job that released it): exit 0, and it says so. The list
      // strategy keeps nothing after a release, so there it cannot tell a release from an expiry.
      const again = await runCli(byHandle, backend.env());
      if (backend.name === 's3+list') {
        expect(again.code).toBe(5);
        expect(again.stderr).toBe(
          `latch release: Lock "${name}" is not held by this handle: this acquisition is gone: it was already released, or it expired\n`,
        );
      } else {
        expect(again).toMatchObject({
          code: 0,
          stdout: `lock "${name}" was released already by this handle; nothing to do\n`,
          stderr: '',
        });
      }
    });
  });
}

/** GitHub Actions outputs and defaults, and release --name: store-independent, run on one store. */
export function githubAndHandleScenarios(current: () => Backend): void {
  describe('latch acquire / release in GitHub Actions', () => {
    let backend: Backend;
    beforeAll(() => {
      backend = current();
    });

    test('--github-output writes the outputs; name and context default from the GitHub Actions run', async () => {
      const workflow = `Deploy ${randomUUID()}`;
      const outputFile = join(dir, `${randomUUID()}.txt`);
      writeFileSync(outputFile, 'earlier=output\n');
      const github = {
        GITHUB_WORKFLOW: workflow,
        GITHUB_JOB: 'lock',
        GITHUB_RUN_NUMBER: '57',
        GITHUB_RUN_ID: '9001',
        GITHUB_SERVER_URL: 'https://github.com',
        GITHUB_REPOSITORY: 'acme/shop',
        GITHUB_OUTPUT: outputFile,
        LATCH_STORE: backend.store,
      };
      const acquired = await runCli(['acquire', '--lease', '30m', '--github-output'], backend.env(github));
      expect(acquired.code).toBe(0);
      const output = JSON.parse(acquired.stdout);
      expect(output.key).toBe(`${workflow}/lock`);
      expect(readFileSync(outputFile, 'utf8')).toBe(
        [
          'earlier=output',
          `key=${workflow}/lock`,
          `handle=${output.handle}`,
          `fencing-token=${output.fencingToken}`,
          `acquired-at=${output.acquiredAt}`,
          `expires-at=${output.expiresAt}`,
          '',
        ].join('\n'),
      );
      expect(await backend.locks.inspect(`${workflow}/lock`)).toMatchObject({
        state: 'held',
        context: `${workflow} run #57 job lock https://github.com/acme/shop/actions/runs/9001`,
      });

      // A later job: another GITHUB_JOB, so the default name differs; the handle names the lock.
      const released = await runCli(
        ['release', '--handle', output.handle],
        backend.env({ ...github, GITHUB_JOB: 'unlock' }),
      );
      expect(released.code).toBe(0);
      expect(await backend.locks.inspect(`${workflow}/lock`)).toMatchObject({ state: 'free' });
    });

    test('a $GITHUB_OUTPUT that cannot be written fails the acquire and frees the lock, whose handle nobody got', async () => {
      const name = `deploy/${randomUUID()}`;
      // A directory where the output file should be: appending to it fails.
      const notAFile = mkdtempSync(join(dir, 'output-'));
      const acquired = await runCli(
        ['acquire', '--store', backend.store, '--name', name, '--github-output'],
        backend.env({ GITHUB_OUTPUT: notAFile }),
      );
      expect(acquired.code).toBe(2);
      expect(acquired.stdout).toBe('');
      expect(acquired.stderr).toMatch(
        /^latch acquire: cannot write the step outputs to \$GITHUB_OUTPUT \(.*\): EISDIR/,
      );
      expect(acquired.stderr.trim().split('\n')).toHaveLength(1);
      expect(await backend.locks.inspect(name)).toMatchObject({ state: 'free', fencingToken: 1 });
    });

    test('release of a handle whose lock was acquired again since fails with 5, held or not', async () => {
      const name = `deploy/${randomUUID()}`;
      const store = ['--store', backend.store];
      const acquire = () => runCli(['acquire', ...store, '--name', name, '--lease', '10m'], backend.env());
      const old = JSON.parse((await acquire()).stdout).handle as string;
      const byOldHandle = ['release', ...store, '--handle', old];
      expect((await runCli(byOldHandle, backend.env())).code).toBe(0);

      // Held by a later acquisition.
      const later = JSON.parse((await acquire()).stdout).handle as string;
      const whileHeld = await runCli(byOldHandle, backend.env());
      expect(whileHeld.code).toBe(5);
      expect(whileHeld.stderr).toContain('another acquisition holds it now');
      // Free again, but not since this handle: its end cannot be told from a lease that ran out.
      await runCli(['release', ...store, '--handle', later], backend.env());
      const afterLater = await runCli(byOldHandle, backend.env());
      expect(afterLater.code).toBe(5);
      expect(afterLater.stderr).toMatch(
        /acquired again since this handle's acquisition \(fencing token 2, this handle's 1\)/,
      );
    });

    test('release --name checks that the handle is for that lock', async () => {
      const name = `deploy/${randomUUID()}`;
      const acquired = await runCli(['acquire', '--store', backend.store, '--name', name], backend.env());
      const { handle } = JSON.parse(acquired.stdout);
      const wrong = await runCli(
        ['release', '--store', backend.store, '--name', `${name}-other`, '--handle', handle],
        backend.env(),
      );
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toBe(`latch release: This handle is for lock "${name}", not "${name}-other".\n`);
      const right = await runCli(
        ['release', '--store', backend.store, '--name', name, '--handle', handle],
        backend.env(),
      );
      expect(right.code).toBe(0);
      expect(await backend.locks.inspect(name)).toMatchObject({ state: 'free' });
    });
  });
}
