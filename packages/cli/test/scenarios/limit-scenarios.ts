import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import type { Backend } from '../helpers/backends.js';
import {
  type CliProcess,
  fixture,
  readLines,
  runArgs,
  runCli,
  startCli,
  until,
} from '../helpers/cli-process.js';

const dir = mkdtempSync(join(tmpdir(), 'latch-cli-limit-'));

/** The most commands of one log that were between their "start" and "end" lines at once. */
function mostAtOnce(lines: string[]): number {
  let inside = 0;
  let most = 0;
  for (const line of lines) {
    inside += line.startsWith('start ') ? 1 : -1;
    most = Math.max(most, inside);
  }
  return most;
}

/** After a failed check, nothing of the test keeps running: SIGTERM reaches latch and its command. */
function stopRunning(runs: CliProcess[]): void {
  for (const { child } of runs) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  }
}

/** `--limit`: several holders of one lock at once, against the backend `current()` returns. */
export function limitScenarios(current: () => Backend): void {
  describe('latch run / acquire / status --limit', () => {
    let backend: Backend;
    beforeAll(() => {
      backend = current();
    });

    test('three latch run --limit 2 at once: two run together, never three; the third runs when a place frees', async () => {
      const name = `deploy/${randomUUID()}`;
      const log = join(dir, `${randomUUID()}.log`);
      const hold = (label: string) => join(dir, `${name.replace('/', '-')}-${label}.go`);
      const runs = ['a', 'b', 'c'].map((label) =>
        startCli(
          runArgs(
            backend.store,
            name,
            ['--limit', '2', '--wait', '2m', '--poll', '200ms'],
            fixture('append-lines.mjs', log, label, hold(label)),
          ),
          backend.env(),
        ),
      );
      try {
        // No command ends before the test says so: two starting means two hold the lock together.
        await until(() => readLines(log).length === 2, 'two commands to run at once');
        const first = readLines(log).map((line) => line.split(' ')[1]!);

        // Both places are taken: one more try is refused, and its command does not run.
        const extraLog = join(dir, `${randomUUID()}.log`);
        const refused = await runCli(
          runArgs(
            backend.store,
            name,
            ['--limit', '2', '--wait', '0'],
            fixture('append-lines.mjs', extraLog, 'x'),
          ),
          backend.env(),
        );
        expect(refused.code).toBe(3);
        expect(refused.stderr).toMatch(
          new RegExp(`^latch run: all 2 places of lock "${name}" \\(--limit 2\\) are taken, one by `),
        );
        expect(readLines(extraLog)).toEqual([]);
        const held = await backend.locks.inspect(name);
        expect(held).toMatchObject({ state: 'held', limit: 2 });
        expect(held.holders).toHaveLength(2);
        expect(readLines(log)).toHaveLength(2);

        // One of the two finishes: the third takes its place.
        writeFileSync(hold(first[0]!), 'go');
        await until(
          () => readLines(log).filter((line) => line.startsWith('start ')).length === 3,
          'the third',
        );
        for (const label of ['a', 'b', 'c']) writeFileSync(hold(label), 'go');
        for (const result of await Promise.all(runs.map((run) => run.result))) {
          expect(result).toMatchObject({ code: 0 });
        }

        const lines = readLines(log);
        expect(lines).toHaveLength(6);
        expect(mostAtOnce(lines)).toBe(2);
        // The third started only after one of the first two ended.
        const third = lines.findIndex((line, i) => line.startsWith('start ') && i >= 2);
        expect(lines.slice(0, third).some((line) => line.startsWith('end '))).toBe(true);
        // Every holder got its own fencing token, higher than those before it.
        const tokens = lines
          .filter((line) => line.startsWith('start '))
          .map((line) => Number(line.split(' ')[2]));
        expect(tokens[2]).toBeGreaterThan(Math.max(tokens[0]!, tokens[1]!));
        expect(new Set(tokens).size).toBe(3);
        expect(await backend.locks.inspect(name)).toMatchObject({ state: 'free', holders: [] });
      } finally {
        stopRunning(runs);
      }
    }, 120_000);

    test('acquire --limit 2 twice; status lists both holders; a waiting run names them and runs once one is released', async () => {
      const name = `deploy/${randomUUID()}`;
      const store = ['--store', backend.store];
      const acquire = (context: string) =>
        runCli(
          [
            'acquire',
            ...store,
            '--name',
            name,
            '--limit',
            '2',
            '--lease',
            '10m',
            '--wait',
            '0',
            '--context',
            context,
          ],
          backend.env(),
        );
      const one = await acquire('deploy of build 1');
      const two = await acquire('deploy of build 2');
      expect(one.code).toBe(0);
      expect(two.code).toBe(0);
      const [first, second] = [JSON.parse(one.stdout), JSON.parse(two.stdout)];
      expect(second.fencingToken).toBeGreaterThan(first.fencingToken);

      const human = await runCli(['status', ...store, '--name', name], backend.env());
      expect(human.code).toBe(0);
      const holderLines = (context: string, token: number) => [
        expect.stringMatching(/^ {2}holder: {8}\S+$/),
        `  context:       ${context}`,
        expect.stringMatching(/^ {2}since: {9}\S+ \(\S+ ago\)$/),
        expect.stringMatching(/^ {2}lease ends: {4}\S+ \(in \S+\)$/),
        `  fencing token: ${token}`,
      ];
      expect(human.stdout.split('\n')).toEqual([
        `lock "${name}": held, 2 of at most 2 holders`,
        ...holderLines('deploy of build 1', first.fencingToken),
        ...holderLines('deploy of build 2', second.fencingToken),
        '',
      ]);
      const json = JSON.parse(
        (await runCli(['status', ...store, '--name', name, '--json'], backend.env())).stdout,
      );
      expect(json).toMatchObject({ key: name, state: 'held', limit: 2 });
      expect(json.holders).toEqual([
        {
          owner: expect.any(String),
          context: 'deploy of build 1',
          acquiredAt: first.acquiredAt,
          expiresAt: first.expiresAt,
          state: 'held',
          fencingToken: first.fencingToken,
        },
        {
          owner: expect.any(String),
          context: 'deploy of build 2',
          acquiredAt: second.acquiredAt,
          expiresAt: second.expiresAt,
          state: 'held',
          fencingToken: second.fencingToken,
        },
      ]);

      // Another limit for the same name is refused before anything runs, naming both.
      const mismatch = await runCli(runArgs(backend.store, name, ['--limit', '3'], ['true']), backend.env());
      expect(mismatch.code).toBe(2);
      expect(mismatch.stderr).toMatch(/limit 2.*limit 3/);

      const log = join(dir, `${randomUUID()}.log`);
      const waiter = startCli(
        runArgs(
          backend.store,
          name,
          ['--limit', '2', '--poll', '200ms'],
          fixture('append-lines.mjs', log, 'c'),
        ),
        backend.env(),
      );
      try {
        await until(() => waiter.stderr().includes('waiting'), 'the run to say that it waits');
        const holder = (context: string) => `${context} \\(\\S+\\), since \\S+, lease ends \\S+`;
        expect(waiter.stderr()).toMatch(
          new RegExp(
            `^latch run: waiting up to 15m for lock "${name}" \\(--limit 2\\), held by ${holder('deploy of build 1')}; ${holder('deploy of build 2')}\\n$`,
          ),
        );
        expect(readLines(log)).toEqual([]);

        const released = await runCli(['release', ...store, '--handle', first.handle], backend.env());
        expect(released.code).toBe(0);
        expect((await waiter.result).code).toBe(0);
        const [start] = readLines(log);
        expect(Number(start!.split(' ')[2])).toBeGreaterThan(second.fencingToken);
        const left = await backend.locks.inspect(name);
        expect(left.holders.map((h) => h.context)).toEqual(['deploy of build 2']);
        expect((await runCli(['release', ...store, '--handle', second.handle], backend.env())).code).toBe(0);
      } finally {
        stopRunning([waiter]);
      }
    }, 120_000);
  });
}
