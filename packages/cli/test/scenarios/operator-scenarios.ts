import { randomUUID } from 'node:crypto';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { LockLostError } from '@latch/core';
import { beforeAll, describe, expect, test } from 'vitest';
import type { Backend } from '../helpers/backends.js';
import { runCli, startCli, until } from '../helpers/cli-process.js';
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
      // Or its exit: a CLI that fails before asking shows why, instead of a timeout.
      await until(() => declined.screen().includes(question) || declined.exited(), 'the question');
      expect(declined.screen()).toContain(question);
      declined.type('\r');
      const no = await declined.result;
      expect(no.code).toBe(0);
      expect(no.screen).toContain(`latch force-release: lock "${name}" left as it is`);
      expect(no.screen).not.toContain('freed');
      expect(await backend.locks.inspect(name)).toMatchObject({ state: 'held', owner });

      const confirmed = startCliInTerminal(args, backend.env());
      await until(() => confirmed.screen().includes(question) || confirmed.exited(), 'the question');
      expect(confirmed.screen()).toContain(question);
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

/** The cells of one table row: columns are two or more spaces apart, cells have single spaces at most. */
const cells = (line: string) => line.split(/ {2,}/);
const HEADER = ['KEY', 'STATE', 'HOLDER', 'CONTEXT', 'SINCE', 'LEASE LEFT', 'TOKEN'];
const AGO = /^(\d+(ms|s|m|h|d))+ ago$/;
const LEFT = /^(\d+(ms|s|m|h|d))+$/;

/** `latch ls`, against the backend `current()` returns. */
export function listingScenarios(current: () => Backend): void {
  describe('latch ls', () => {
    let backend: Backend;
    beforeAll(() => {
      backend = current();
    });

    test('ls [prefix]: held, expired, free and limited locks under the prefix, sorted by key, as a table and as JSON', async () => {
      const prefix = `ops-${randomUUID()}/`;
      const store = ['--store', backend.store];
      // Made out of key order, and one beside the prefix that must not show.
      const limited = [1, 2].map((n) =>
        runCli(
          ['acquire', ...store, '--name', `${prefix}d-limited`, '--limit', '2', '--context', `limited ${n}`],
          backend.env(),
        ),
      );
      const expired = await backend.locks.acquire(`${prefix}b-expired`, {
        leaseMs: 1000,
        heartbeatMs: false,
        context: 'crashed job',
      });
      const freed = await backend.locks.acquire(`${prefix}c-free`);
      await freed.release();
      const held = JSON.parse(
        (
          await runCli(
            ['acquire', ...store, '--name', `${prefix}a-held`, '--lease', '10m', '--context', 'deploy #1'],
            backend.env(),
          )
        ).stdout,
      );
      const beside = await backend.locks.acquire(`other-${prefix}x`);
      const [one, two] = (await Promise.all(limited)).map((result) => JSON.parse(result.stdout));
      await until(() => Date.now() > expired.expiresAt! + 50, 'the short lease to end');
      const owners = {
        held: (await backend.locks.inspect(`${prefix}a-held`)).owner,
        limited: (await backend.locks.inspect(`${prefix}d-limited`)).holders.map((h) => h.owner),
      };

      const table = await runCli(['ls', prefix, ...store], backend.env());
      expect(table).toMatchObject({ code: 0, stderr: '' });
      const lines = table.stdout.split('\n');
      expect(lines.pop()).toBe('');
      expect(lines.map(cells)).toEqual([
        HEADER,
        [
          `${prefix}a-held`,
          'held',
          owners.held,
          'deploy #1',
          expect.stringMatching(AGO),
          expect.stringMatching(/^(9m\d+s|10m)$/),
          String(held.fencingToken),
        ],
        [
          `${prefix}b-expired`,
          'expired',
          expired.owner,
          'crashed job',
          expect.stringMatching(AGO),
          expect.stringMatching(/^ended \S+ ago$/),
          String(expired.fencingToken),
        ],
        [`${prefix}c-free`, 'free', '-', '-', '-', '-', String(freed.fencingToken)],
        ...[one, two]
          .sort((a, b) => a.fencingToken - b.fencingToken)
          .map((lock, i) => [
            `${prefix}d-limited`,
            'held',
            owners.limited[i],
            `limited ${lock.fencingToken === one.fencingToken ? 1 : 2}`,
            expect.stringMatching(AGO),
            expect.stringMatching(LEFT),
            String(lock.fencingToken),
          ]),
      ]);
      // Columns line up: every cell starts where its header does.
      const starts = HEADER.map((title) => lines[0]!.indexOf(title));
      for (const line of lines.slice(1)) {
        for (const [column, start] of starts.entries()) {
          expect(line.slice(start).startsWith(cells(line)[column]!)).toBe(true);
        }
      }

      const json = await runCli(['ls', prefix, ...store, '--json'], backend.env());
      expect(json).toMatchObject({ code: 0, stderr: '' });
      expect(json.stdout.endsWith('\n') && json.stdout.trim().split('\n')).toHaveLength(1);
      const listed = JSON.parse(json.stdout);
      expect(listed.map((lock: { key: string }) => lock.key)).toEqual(
        ['a-held', 'b-expired', 'c-free', 'd-limited'].map((key) => `${prefix}${key}`),
      );
      expect(listed[0]).toEqual({
        key: `${prefix}a-held`,
        state: 'held',
        fencingToken: held.fencingToken,
        owner: owners.held,
        context: 'deploy #1',
        acquiredAt: held.acquiredAt,
        expiresAt: held.expiresAt,
      });
      expect(listed[1]).toEqual({
        key: `${prefix}b-expired`,
        state: 'expired',
        fencingToken: expired.fencingToken,
        owner: expired.owner,
        context: 'crashed job',
        acquiredAt: new Date(expired.acquiredAt).toISOString(),
        expiresAt: new Date(expired.expiresAt!).toISOString(),
      });
      expect(listed[2]).toEqual({ key: `${prefix}c-free`, state: 'free', fencingToken: freed.fencingToken });
      expect(listed[3]).toMatchObject({ key: `${prefix}d-limited`, state: 'held', limit: 2 });
      expect(listed[3].holders.map((h: { fencingToken: number }) => h.fencingToken).sort()).toEqual(
        [one.fencingToken, two.fencingToken].sort(),
      );

      // The same listing without a prefix includes the lock beside it; a prefix nothing is under lists none.
      const all = JSON.parse((await runCli(['ls', ...store, '--json'], backend.env())).stdout);
      expect(all.map((lock: { key: string }) => lock.key)).toContain(`other-${prefix}x`);
      const keys = all.map((lock: { key: string }) => lock.key);
      expect(keys).toEqual([...keys].sort());
      const none = await runCli(['ls', `none-${prefix}`, ...store], backend.env());
      expect(none).toMatchObject({ code: 0, stdout: `no locks under "none-${prefix}"\n` });
      expect((await runCli(['ls', `none-${prefix}`, ...store, '--json'], backend.env())).stdout).toBe('[]\n');
      await beside.release();
    });
  });
}

/** `latch watch`, against the backend `current()` returns. */
export function watchScenarios(current: () => Backend): void {
  describe('latch watch', () => {
    let backend: Backend;
    beforeAll(() => {
      backend = current();
    });

    test('watch without a terminal: a timestamped snapshot per refresh, a release shows in a later one; SIGINT ends it with 130', async () => {
      const prefix = `watch-${randomUUID()}/`;
      const lock = await backend.locks.acquire(`${prefix}job`, { context: 'report run' });
      const watch = startCli(
        ['watch', prefix, '--store', backend.store, '--interval', '200ms'],
        backend.env(),
      );
      try {
        const row = (state: string) => new RegExp(`^${prefix}job {2,}${state} `, 'm');
        await until(() => row('held').test(watch.stdout()), 'a snapshot with the lock held');
        await lock.release();
        await until(
          () => row('free').test(watch.stdout()) || watch.stdout().includes(`: 0 locks under "${prefix}"`),
          'a snapshot with the lock free',
        );
      } finally {
        watch.child.kill('SIGINT');
      }
      const result = await watch.result;
      expect(result.code).toBe(130);
      expect(result.stderr).toBe('');
      const snapshots = result.stdout.split('\n\n');
      expect(snapshots.pop()).toBe('');
      const parsed = snapshots.map((snapshot) => snapshot.split('\n'));
      const time = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ';
      for (const lines of parsed) {
        if (lines.length === 1) {
          expect(lines[0]).toMatch(new RegExp(`^${time}: 0 locks under "${prefix}"$`));
          continue;
        }
        expect(lines).toHaveLength(3);
        expect(lines[0]).toMatch(new RegExp(`^${time}: 1 lock under "${prefix}"$`));
        expect(cells(lines[1]!)).toEqual(HEADER);
      }
      // The S3 list strategy keeps nothing of a released lock: it is gone from the listing.
      const released = backend.counterTokens ? 'free' : 'none';
      const states = parsed.map((lines) => (lines[2] === undefined ? 'none' : cells(lines[2])[1]));
      // Held in the first snapshots, released from then on: one change, never back.
      expect(states[0]).toBe('held');
      expect(states.at(-1)).toBe(released);
      const change = states.indexOf(released);
      expect(change).toBeGreaterThan(0);
      expect(states.slice(0, change).every((state) => state === 'held')).toBe(true);
      expect(states.slice(change).every((state) => state === released)).toBe(true);
      expect(cells(parsed[0]![2]!)).toEqual([
        `${prefix}job`,
        'held',
        lock.owner,
        'report run',
        expect.stringMatching(AGO),
        expect.stringMatching(LEFT),
        String(lock.fencingToken),
      ]);
    });

    test('watch --count 2 refreshes twice and exits 0; on a terminal it redraws in place', async () => {
      const prefix = `watch-${randomUUID()}/`;
      const lock = await backend.locks.acquire(`${prefix}job`);
      try {
        const args = ['watch', prefix, '--store', backend.store, '--interval', '100ms', '--count', '2'];
        const logged = await runCli(args, backend.env());
        expect(logged).toMatchObject({ code: 0, stderr: '' });
        expect(logged.stdout.split('\n\n')).toHaveLength(3);
        expect(logged.stdout).not.toContain('\u001b');

        const terminal = startCliInTerminal(args, backend.env());
        const shown = await terminal.result;
        expect(shown.code).toBe(0);
        const frames = shown.screen.replaceAll('\r', '').split('\u001b[H\u001b[2J');
        expect(frames.shift()).toBe('');
        expect(frames).toHaveLength(2);
        for (const frame of frames) {
          expect(frame).toMatch(
            new RegExp(`^Every 100ms: latch ls ${prefix} {2}\\S+Z\n\nKEY +STATE +HOLDER`),
          );
          expect(frame).toMatch(new RegExp(`^${prefix}job {2,}held {2,}${lock.owner} `, 'm'));
        }
      } finally {
        await lock.release();
      }
    });
  });
}

/** S3 only: something that is not a lock record under the store's prefix, and a bucket that does not exist. */
export function listingFailureScenarios(current: () => Backend): void {
  describe('latch ls: what it cannot list', () => {
    test('a record that cannot be read is left out and named on stderr, with the command that frees it', async () => {
      const backend = current();
      const prefix = `broken-${randomUUID()}/`;
      const lock = await backend.locks.acquire(`${prefix}fine`);
      const env = backend.env();
      const client = new S3Client({
        endpoint: env.AWS_ENDPOINT_URL!,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! },
      });
      try {
        await client.send(
          new PutObjectCommand({
            Bucket: 'ci-locks',
            Key: `pipelines/${prefix}junk`,
            Body: 'not a lock record',
          }),
        );
        const result = await runCli(['ls', prefix, '--store', backend.store, '--json'], env);
        expect(result.code).toBe(0);
        expect(JSON.parse(result.stdout).map((info: { key: string }) => info.key)).toEqual([`${prefix}fine`]);
        expect(result.stderr).toMatch(
          new RegExp(
            `^latch ls: left out "${prefix}junk": its record cannot be read \\(.+\\); 'latch force-release ${prefix}junk' replaces it with a free one\n$`,
          ),
        );
      } finally {
        client.destroy();
        await lock.release();
      }
    });

    test('a missing bucket is a store error (exit 4) naming it', async () => {
      const backend = current();
      const result = await runCli(['ls', '--store', 's3://no-such-bucket/locks'], backend.env());
      expect(result).toMatchObject({ code: 4, stdout: '' });
      expect(result.stderr).toMatch(/^latch ls: store error: bucket "no-such-bucket" does not exist; .*\n$/);
      const watch = await runCli(
        ['watch', '--store', 's3://no-such-bucket/locks', '--count', '1'],
        backend.env(),
      );
      expect(watch).toMatchObject({ code: 4, stdout: '' });
      expect(watch.stderr).toMatch(
        /^latch watch: store error: bucket "no-such-bucket" does not exist; .*\n$/,
      );
    });
  });
}
