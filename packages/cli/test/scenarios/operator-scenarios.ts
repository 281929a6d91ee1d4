import { randomUUID } from 'node:crypto';
import { LockLostError } from '@latch/core';
import { beforeAll, describe, expect, test } from 'vitest';
import type { Backend } from '../helpers/backends.js';
import { runCli, until } from '../helpers/cli-process.js';
import { startCliInTerminal } from '../helpers/terminal.js';

/** "… (owner), since <iso>, lease ends <iso>, fencing token <n>": a holder as force-release reports it. */
const holderPattern = (context: string, token: number) =>
  `${context} \\(\\S+\\), since \\S+Z, lease ends \\S+Z, fencing token ${token}`;

/** `latch force-release`, against the backend `current()` returns. */
export function forceReleaseScenarios(current: () => Backend): void {
  describe('latch force-release', () => {
    let backend: Backend;
    beforeAll(() => {
      backend = current();
    });

    test('--yes frees a lock held by another client, whose signal then aborts as lost; the token is kept', async () => {
      const name = `deploy/${randomUUID()}`;
      // A live holder in this process: it renews every 500 ms, and learns of the loss on the next renewal.
      const lock = await backend.locks.acquire(name, {
        leaseMs: 5000,
        heartbeatMs: 500,
        context: 'nightly export',
      });
      const freed = await runCli(['force-release', name, '--store', backend.store, '--yes'], backend.env());
      expect(freed.stderr).toBe('');
      expect(freed.code).toBe(0);
      expect(freed.stdout).toMatch(
        new RegExp(
          `^freed lock "${name}", taken from ${holderPattern('nightly export', lock.fencingToken)}\\n$`,
        ),
      );
      expect(freed.stdout).toContain(`(${lock.owner})`);
      await until(() => lock.signal.aborted, "the holder's signal to abort");
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect((lock.signal.reason as LockLostError).key).toBe(name);
      const after = await backend.locks.inspect(name);
      expect(after).toMatchObject({ state: 'free', holders: [] });
      if (backend.counterTokens) expect(after.fencingToken).toBe(lock.fencingToken);
    });

    test('without a terminal and without --yes it refuses before any request, and the lock stays held', async () => {
      const name = `deploy/${randomUUID()}`;
      const lock = await backend.locks.acquire(name, { leaseMs: 60_000 });
      try {
        const refused = await runCli(['force-release', name, '--store', backend.store], backend.env());
        expect(refused).toMatchObject({ code: 2, stdout: '' });
        expect(refused.stderr).toBe(
          `latch force-release: nobody to ask for a confirmation (stdin is not a terminal): pass --yes to free lock "${name}" without asking.\n`,
        );
        expect(lock.signal.aborted).toBe(false);
        expect(await backend.locks.inspect(name)).toMatchObject({ state: 'held', owner: lock.owner });
      } finally {
        await lock.release();
      }
    });

    test('on a terminal it shows the holder and asks: Enter alone leaves the lock, "y" frees it', async () => {
      const name = `deploy/${randomUUID()}`;
      const acquired = await runCli(
        ['acquire', '--store', backend.store, '--name', name, '--lease', '10m', '--context', 'release 1.4'],
        backend.env(),
      );
      const { fencingToken } = JSON.parse(acquired.stdout);
      const owner = (await backend.locks.inspect(name)).owner!;
      const question = `Free "${name}" held by ${owner} (release 1.4, token ${fencingToken})? [y/N] `;
      const args = ['force-release', name, '--store', backend.store];

      const declined = startCliInTerminal(args, backend.env());
      await until(() => declined.screen().includes(question), 'the question');
      declined.type('\r');
      const no = await declined.result;
      expect(no.code).toBe(0);
      expect(no.screen).toContain(`latch force-release: lock "${name}" left as it is`);
      expect(no.screen).not.toContain('freed');
      expect(await backend.locks.inspect(name)).toMatchObject({ state: 'held', owner });

      const confirmed = startCliInTerminal(args, backend.env());
      await until(() => confirmed.screen().includes(question), 'the question');
      confirmed.type('y\r');
      const yes = await confirmed.result;
      expect(yes.code).toBe(0);
      expect(yes.screen.replaceAll('\r', '')).toMatch(
        new RegExp(
          `\\? \\[y/N\\] y\\nfreed lock "${name}", taken from ${holderPattern('release 1.4', fencingToken)}\\n$`,
        ),
      );
      expect(await backend.locks.inspect(name)).toMatchObject({ state: 'free' });
    });

    test('a lock nobody holds: says so and exits 0, having only read it', async () => {
      const name = `deploy/${randomUUID()}`;
      const result = await runCli(['force-release', name, '--store', backend.store, '--yes'], backend.env());
      expect(result).toMatchObject({
        code: 0,
        stderr: '',
        stdout: `lock "${name}" was not held: nothing to free\n`,
      });
      expect(await backend.locks.inspect(name)).toMatchObject({ state: 'free', fencingToken: 0 });
    });
  });
}
