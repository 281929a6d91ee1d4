import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Backend, startS3Backend } from './helpers/backends.js';
import { fixture, readLines, runArgs, runCli, startCli, until } from './helpers/cli-process.js';

const dir = mkdtempSync(join(tmpdir(), 'latch-cli-signals-'));

let backend: Backend;
beforeAll(async () => {
  backend = await startS3Backend();
});
afterAll(async () => {
  await backend?.stop();
});

/** Starts `latch run` with a trap-signals command and waits until that command is running. */
async function startHolding(name: string, extraFlags: string[], fixtureArgs: string[]) {
  const log = join(dir, `${randomUUID()}.log`);
  const cli = startCli(
    runArgs(backend.store, name, extraFlags, fixture('trap-signals.mjs', log, ...fixtureArgs)),
    backend.env(),
  );
  await until(() => readLines(log).length > 0, 'the command to start');
  return { cli, log };
}

describe('signals', () => {
  test('SIGTERM to latch reaches the command, whose exit code latch passes on; the lock is released', async () => {
    const name = `job/${randomUUID()}`;
    const { cli, log } = await startHolding(name, [], ['42']);
    cli.child.kill('SIGTERM');
    const result = await cli.result;
    expect(readLines(log)).toEqual([expect.stringMatching(/^ready \d+ 1$/), 'got SIGTERM']);
    expect(result.code).toBe(42);
    expect(await backend.locks.inspect(name)).toMatchObject({ state: 'free', fencingToken: 1 });
  });

  test('SIGINT to latch reaches the command; a command ended by the signal gives 128 + signo', async () => {
    const name = `job/${randomUUID()}`;
    const { cli } = await startHolding(name, [], ['0', '--default']);
    cli.child.kill('SIGINT');
    const result = await cli.result;
    expect(result.code).toBe(130);
    expect(await backend.locks.inspect(name)).toMatchObject({ state: 'free' });
  });

  test('SIGTERM while waiting for the lock stops latch without running the command', async () => {
    const name = `job/${randomUUID()}`;
    const { cli: holder } = await startHolding(name, [], ['0']);
    const log = join(dir, `${randomUUID()}.log`);
    const waiter = startCli(
      runArgs(backend.store, name, [], fixture('trap-signals.mjs', log, '0')),
      backend.env(),
    );
    await until(() => waiter.stderr().includes('waiting'), 'the waiter to report that it waits');
    waiter.child.kill('SIGTERM');
    const result = await waiter.result;
    expect(result.code).toBe(143);
    expect(result.stderr).toContain('SIGTERM received while waiting for lock');
    // Every line latch writes names the command, the waiting notice included.
    for (const line of result.stderr.split('\n').filter(Boolean)) expect(line).toMatch(/^latch run: /);
    expect(readLines(log)).toEqual([]);
    holder.child.kill('SIGTERM');
    expect((await holder.result).code).toBe(0);
    expect(await backend.locks.inspect(name)).toMatchObject({ state: 'free', fencingToken: 1 });
  });
});

describe('exit codes', () => {
  test.each([
    { what: 'exits 0', script: 'process.exit(0)', expected: 0 },
    { what: 'exits 7', script: 'process.exit(7)', expected: 7 },
    { what: 'is killed by SIGKILL', script: "process.kill(process.pid, 'SIGKILL')", expected: 137 },
  ])('a command that $what makes latch exit with $expected', async ({ script, expected }) => {
    const name = `job/${randomUUID()}`;
    const result = await runCli(
      runArgs(backend.store, name, [], [process.execPath, '-e', script]),
      backend.env(),
    );
    expect(result.code).toBe(expected);
    expect(await backend.locks.inspect(name)).toMatchObject({ state: 'free', fencingToken: 1 });
  });

  test('a command that does not exist gives 127 before the lock is taken', async () => {
    const name = `job/${randomUUID()}`;
    for (const command of ['latch-test-no-such-command', './no-such-script.sh']) {
      const result = await runCli(runArgs(backend.store, name, [], [command]), backend.env());
      expect(result.code).toBe(127);
      expect(result.stderr).toBe(
        `latch run: cannot run "${command}": command not found; the lock was not taken\n`,
      );
    }
    // Never acquired: no fencing token was spent.
    expect(await backend.locks.inspect(name)).toMatchObject({ state: 'free', fencingToken: 0 });
  });

  test('a command that does not exist gives 127 at once, without waiting for a held lock', async () => {
    const name = `job/${randomUUID()}`;
    const holder = await backend.locks.acquire(name, { context: 'someone else' });
    try {
      // Were the lock waited for first, this would wait the whole 10 minutes.
      const result = await runCli(
        runArgs(backend.store, name, ['--wait', '10m'], ['latch-test-no-such-command']),
        backend.env(),
      );
      expect(result.code).toBe(127);
      expect(result.stderr).not.toContain('waiting');
      expect(await backend.locks.inspect(name)).toMatchObject({
        state: 'held',
        fencingToken: holder.fencingToken,
      });
    } finally {
      await holder.release();
    }
  });

  test('a file that is not executable gives 126 before the lock is taken', async () => {
    const name = `job/${randomUUID()}`;
    const script = join(dir, 'not-executable.sh');
    writeFileSync(script, 'echo never\n', { mode: 0o644 });
    const result = await runCli(runArgs(backend.store, name, [], [script]), backend.env());
    expect(result.code).toBe(126);
    expect(result.stderr).toBe(
      `latch run: cannot run "${script}": permission denied; the lock was not taken\n`,
    );
    expect(await backend.locks.inspect(name)).toMatchObject({ state: 'free', fencingToken: 0 });
  });

  test('the command gets the fencing token in LATCH_FENCING_TOKEN', async () => {
    const name = `job/${randomUUID()}`;
    const printToken = 'console.log(process.env.LATCH_FENCING_TOKEN)';
    const args = runArgs(backend.store, name, [], [process.execPath, '-e', printToken]);
    expect((await runCli(args, backend.env())).stdout).toBe('1\n');
    expect((await runCli(args, backend.env())).stdout).toBe('2\n');
  });
});

describe('a lock lost while the command runs', () => {
  test('latch says so, stops the command with SIGTERM and exits with 5', async () => {
    const name = `job/${randomUUID()}`;
    const { cli, log } = await startHolding(name, ['--lease', '3s'], ['0']);
    // An operator frees the lock: the holder's next renewal finds the record changed.
    expect(await backend.locks.forceRelease(name)).toBe(true);
    const result = await cli.result;
    expect(readLines(log)).toEqual([expect.stringMatching(/^ready /), 'got SIGTERM']);
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(
      new RegExp(`^latch run: Lock "${name}" was lost: .*; stopping the command with SIGTERM$`, 'm'),
    );
    expect(result.stderr).toMatch(/exiting with 5 because the lock was lost \(the command exited with 0\)/);
    for (const line of result.stderr.split('\n').filter(Boolean)) expect(line).toMatch(/^latch run: /);
  });
});
