import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import type { Backend } from '../helpers/backends.js';
import { fixture, readLines, runArgs, runCli, startCli, until } from '../helpers/cli-process.js';

const dir = mkdtempSync(join(tmpdir(), 'latch-cli-run-'));

/** The `latch run` tests, against the backend `current()` returns once the suite runs. */
export function runScenarios(current: () => Backend): void {
  describe('latch run', () => {
    let backend: Backend;
    beforeAll(() => {
      backend = current();
    });

    test('two latch run in parallel never overlap, and each command gets its own fencing token', async () => {
      const name = `deploy/${randomUUID()}`;
      const log = join(dir, `${randomUUID()}.log`);
      const runs = ['a', 'b'].map((label) =>
        runCli(
          runArgs(
            backend.store,
            name,
            ['--lease', '10s', '--poll', '200ms'],
            fixture('append-lines.mjs', log, label),
          ),
          backend.env(),
        ),
      );
      const results = await Promise.all(runs);
      for (const result of results) expect(result).toMatchObject({ code: 0 });

      const lines = readLines(log);
      expect(lines).toHaveLength(4);
      // Each start is followed directly by the end of the same command: no interleaving.
      const [first, second] = [lines.slice(0, 2), lines.slice(2, 4)];
      for (const pair of [first!, second!]) {
        const [, label, token] = pair[0]!.split(' ');
        expect(pair[0]).toMatch(/^start [ab] \d+$/);
        expect(pair[1]).toBe(`end ${label}`);
        expect(Number(token)).toBeGreaterThan(0);
      }
      const tokens = [first![0]!, second![0]!].map((line) => Number(line.split(' ')[2]));
      expect(tokens[1]).toBeGreaterThan(tokens[0]!);
      expect(await backend.locks.inspect(name)).toMatchObject({ state: 'free' });
      if (backend.counterTokens)
        expect(await backend.locks.inspect(name)).toMatchObject({ fencingToken: tokens[1] });
    });

    test('a waiting run says who holds the lock, and starts only after the holder exits', async () => {
      const name = `deploy/${randomUUID()}`;
      const log = join(dir, `${randomUUID()}.log`);
      const holdA = join(dir, `${randomUUID()}.go`);
      const a = startCli(
        runArgs(
          backend.store,
          name,
          ['--context', 'deploy of build 17'],
          fixture('append-lines.mjs', log, 'a', holdA),
        ),
        backend.env(),
      );
      await until(() => readLines(log).length === 1, 'the first command to start');
      const b = startCli(
        runArgs(backend.store, name, ['--poll', '200ms'], fixture('append-lines.mjs', log, 'b')),
        backend.env(),
      );
      await until(() => b.stderr().includes('waiting'), 'the second run to report that it waits');
      expect(b.stderr()).toMatch(
        new RegExp(`waiting up to 15m for lock "${name}", held by deploy of build 17 \\(`),
      );
      expect(readLines(log)).toEqual([expect.stringMatching(/^start a /)]);

      writeFileSync(holdA, 'go');
      const [resultA, resultB] = await Promise.all([a.result, b.result]);
      expect(resultA.code).toBe(0);
      expect(resultB.code).toBe(0);
      expect(readLines(log).map((line) => line.split(' ').slice(0, 2).join(' '))).toEqual([
        'start a',
        'end a',
        'start b',
        'end b',
      ]);
    });

    test('a run that gives up waiting exits 3 without running its command, and leaves nothing behind', async () => {
      const name = `deploy/${randomUUID()}`;
      const log = join(dir, `${randomUUID()}.log`);
      const holdA = join(dir, `${randomUUID()}.go`);
      const a = startCli(
        runArgs(backend.store, name, [], fixture('append-lines.mjs', log, 'a', holdA)),
        backend.env(),
      );
      await until(() => readLines(log).length === 1, 'the first command to start');
      const waiterLog = join(dir, `${randomUUID()}.log`);
      const gaveUp = await runCli(
        runArgs(
          backend.store,
          name,
          ['--wait', '1s', '--poll', '200ms'],
          fixture('append-lines.mjs', waiterLog, 'b'),
        ),
        backend.env(),
      );
      expect(gaveUp.code).toBe(3);
      expect(gaveUp.stderr).toMatch(
        new RegExp(`^latch run: gave up after waiting 1s: lock "${name}" is held`, 'm'),
      );
      expect(readLines(waiterLog)).toEqual([]);

      writeFileSync(holdA, 'go');
      expect((await a.result).code).toBe(0);
      // An attempt of the waiter still in flight when it gave up must not hold the lock now.
      expect(await backend.locks.inspect(name)).toMatchObject({ state: 'free' });
    });

    test("a SIGKILLed holder's lock is taken over once its lease ends", async () => {
      const name = `deploy/${randomUUID()}`;
      const log = join(dir, `${randomUUID()}.log`);
      const holder = startCli(
        runArgs(backend.store, name, ['--lease', '2s'], fixture('trap-signals.mjs', log, '0')),
        backend.env(),
      );
      await until(() => readLines(log).length === 1, 'the holder to start its command');
      const [, pid, token] = readLines(log)[0]!.split(' ');
      holder.child.kill('SIGKILL');
      // latch cannot stop its command when it is SIGKILLed itself; the test does.
      process.kill(Number(pid), 'SIGKILL');
      expect((await holder.result).signal).toBe('SIGKILL');
      const abandoned = await backend.locks.inspect(name);
      expect(abandoned).toMatchObject({ state: 'held', fencingToken: Number(token) });

      const log2 = join(dir, `${randomUUID()}.log`);
      const next = await runCli(
        runArgs(
          backend.store,
          name,
          ['--lease', '2s', '--wait', '30s', '--poll', '200ms'],
          fixture('note-start-time.mjs', log2),
        ),
        backend.env(),
      );
      expect(next.code).toBe(0);
      const [startedAt, nextToken] = readLines(log2)[0]!.split(' ').map(Number);
      expect(nextToken).toBeGreaterThan(Number(token));
      // The next command began only once the abandoned lease had ended, not before.
      expect(startedAt).toBeGreaterThanOrEqual(abandoned.expiresAt!);
      expect(await backend.locks.inspect(name)).toMatchObject({ state: 'free' });
    });
  });
}
