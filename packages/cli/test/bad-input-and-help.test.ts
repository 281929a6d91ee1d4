import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { main } from '../src/index.js';
import { startS3Backend } from './helpers/backends.js';
import { baseEnv, runCli } from './helpers/cli-process.js';

let backend: Awaited<ReturnType<typeof startS3Backend>>;
let closedPort: number;
beforeAll(async () => {
  backend = await startS3Backend();
  // A port that was free a moment ago and has nothing listening: connections are refused.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closedPort = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
});
afterAll(async () => {
  await backend?.stop();
});

/** Exactly one line on stderr, nothing on stdout, and no stack trace. */
function expectOneLine(result: { stdout: string; stderr: string }): string {
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/^latch[^\n]*\n$/);
  expect(result.stderr).not.toMatch(/\bat .+:\d+:\d+/);
  return result.stderr.trimEnd();
}

/** Every usage mistake: exit code 2 and this exact line. */
const USAGE_MISTAKES = [
  {
    what: 'a bad duration',
    args: ['run', '--store', 's3://ci-locks', '--name', 'x', '--lease', '10 minutes', '--', 'true'],
    code: 2,
    line: 'latch run: --lease must be a duration like 500ms, 90s, 15m, 1h or 1h30m, got "10 minutes".',
  },
  {
    what: 'a duration without a unit',
    args: ['acquire', '--store', 's3://ci-locks', '--name', 'x', '--wait', '30'],
    code: 2,
    line: 'latch acquire: --wait must be a duration like 500ms, 90s, 15m, 1h or 1h30m, got "30".',
  },
  {
    what: 'a missing --name outside GitHub Actions',
    args: ['run', '--store', 's3://ci-locks', '--', 'true'],
    code: 2,
    line: 'latch run: --name is required outside GitHub Actions (where it defaults to "$GITHUB_WORKFLOW/$GITHUB_JOB").',
  },
  {
    what: 'a missing --store',
    args: ['status', '--name', 'x'],
    code: 2,
    line: 'latch status: --store is required (or set LATCH_STORE), e.g. --store s3://my-bucket/locks.',
  },
  {
    what: 'an unknown store scheme',
    args: ['status', '--store', 'redis://localhost/0', '--name', 'x'],
    code: 2,
    line: 'latch status: --store: unknown store scheme "redis:"; use s3://bucket/prefix, s3+list://bucket/prefix, dynamodb://table or memory:.',
  },
  {
    what: 'an invalid bucket name',
    args: ['status', '--store', 's3://My_Bucket/locks', '--name', 'x'],
    code: 2,
    line: 'latch status: --store: "My_Bucket" is not a valid S3 bucket name (3-63 lowercase letters, digits, dots and hyphens).',
  },
  {
    what: 'an unknown option',
    args: ['status', '--store', 's3://ci-locks', '--name', 'x', '--verbose'],
    code: 2,
    line: "latch status: unknown option --verbose. See 'latch status --help'.",
  },
  {
    what: 'an option without its value',
    args: ['acquire', '--store', 's3://ci-locks', '--name'],
    code: 2,
    line: "latch acquire: --name needs a value. See 'latch acquire --help'.",
  },
  {
    what: 'run without a command',
    args: ['run', '--store', 's3://ci-locks', '--name', 'x'],
    code: 2,
    line: 'latch run: no command given; put it after "--", e.g. latch run --name deploy -- ./deploy.sh.',
  },
  {
    what: 'a command given without --',
    args: ['run', '--store', 's3://ci-locks', '--name', 'x', './deploy.sh'],
    code: 2,
    line: 'latch run: unexpected argument "./deploy.sh". See \'latch run --help\'.',
  },
  {
    what: 'a malformed handle',
    args: ['release', '--store', 's3://ci-locks', '--handle', 'not-a-handle'],
    code: 2,
    line: 'latch release: Not a lock handle: expected the string from lock.handle (it starts with "latch1.").',
  },
  {
    what: 'a truncated handle',
    args: ['release', '--store', 's3+list://ci-locks', '--handle', 'latch1.x'],
    code: 2,
    line: 'latch release: Malformed lock handle: it was truncated or altered; pass lock.handle unchanged.',
  },
  {
    what: 'a limit of 0',
    args: ['run', '--store', 's3://ci-locks', '--name', 'x', '--limit', '0', '--', 'true'],
    code: 2,
    line: 'latch run: --limit must be a whole number from 1 to 100 (how many may hold the lock at once), got "0"; e.g. --limit 2.',
  },
  {
    what: 'a limit that is not a number',
    args: ['acquire', '--store', 's3://ci-locks', '--name', 'x', '--limit', 'x'],
    code: 2,
    line: 'latch acquire: --limit must be a whole number from 1 to 100 (how many may hold the lock at once), got "x"; e.g. --limit 2.',
  },
  {
    what: 'a limit over 100',
    args: ['run', '--store', 's3://ci-locks', '--name', 'x', '--limit', '101', '--', 'true'],
    code: 2,
    line: 'latch run: --limit must be a whole number from 1 to 100 (how many may hold the lock at once), got "101"; e.g. --limit 2.',
  },
  {
    what: 'a fractional limit',
    args: ['run', '--store', 's3://ci-locks', '--name', 'x', '--limit', '1.5', '--', 'true'],
    code: 2,
    line: 'latch run: --limit must be a whole number from 1 to 100 (how many may hold the lock at once), got "1.5"; e.g. --limit 2.',
  },
  {
    what: 'a limit on the S3 list strategy',
    args: ['run', '--store', 's3+list://ci-locks', '--name', 'x', '--limit', '2', '--', 'true'],
    code: 2,
    line: 'latch run: --limit above 1 needs s3:// (S3 conditional writes) or dynamodb://; the s3+list:// strategy holds one at a time.',
  },
  {
    what: 'an unknown command',
    args: ['lock', '--name', 'x'],
    code: 2,
    line: 'latch: unknown command "lock"; commands are run, acquire, release, status, ls, watch, force-release, doctor. See \'latch --help\'.',
  },
  {
    what: 'force-release without a key',
    args: ['force-release', '--store', 's3://ci-locks', '--yes'],
    code: 2,
    line: "latch force-release: the lock's key is required: latch force-release <key>, as 'latch ls' shows it.",
  },
  {
    what: 'force-release with two keys',
    args: ['force-release', 'deploy/a', 'deploy/b', '--store', 's3://ci-locks', '--yes'],
    code: 2,
    line: 'latch force-release: unexpected argument "deploy/b". See \'latch force-release --help\'.',
  },
  {
    what: 'ls with two prefixes',
    args: ['ls', 'deploy/', 'exports/', '--store', 's3://ci-locks'],
    code: 2,
    line: 'latch ls: unexpected argument "exports/". See \'latch ls --help\'.',
  },
  {
    what: 'ls without a store',
    args: ['ls', 'deploy/'],
    code: 2,
    line: 'latch ls: --store is required (or set LATCH_STORE), e.g. --store s3://my-bucket/locks.',
  },
  {
    what: 'watch with an interval without a unit',
    args: ['watch', '--store', 's3://ci-locks', '--interval', '5'],
    code: 2,
    line: 'latch watch: --interval must be a duration like 500ms, 90s, 15m, 1h or 1h30m, got "5".',
  },
  {
    what: 'watch --count 0',
    args: ['watch', '--store', 's3://ci-locks', '--count', '0'],
    code: 2,
    line: 'latch watch: --count must be a whole number of refreshes, 1 or more, got "0"; e.g. --count 3.',
  },
];

// The built CLI is run for the mistakes the issue names (and a few more); all are also run in process.
const RUN_AS_CHILD = new Set([
  'a bad duration',
  'a missing --name outside GitHub Actions',
  'an unknown store scheme',
  'an unknown option',
  'a malformed handle',
  'a limit of 0',
  'a limit that is not a number',
  'force-release without a key',
  'ls with two prefixes',
  'watch with an interval without a unit',
]);

describe('bad input gives one clear line and a non-zero exit, before any request', () => {
  test.each(USAGE_MISTAKES.filter((mistake) => RUN_AS_CHILD.has(mistake.what)))(
    'built CLI: $what',
    async ({ args, code, line }) => {
      const result = await runCli(args, backend.env());
      expect(expectOneLine(result)).toBe(line);
      expect(result.code).toBe(code);
    },
  );

  test.each(USAGE_MISTAKES)('main(): $what', async ({ args, code, line }) => {
    const out: string[] = [];
    const err: string[] = [];
    const exit = await main(args, {}, { out: (l) => out.push(l), err: (l) => err.push(l) });
    expect({ exit, out, err }).toEqual({ exit: code, out: [], err: [line] });
  });

  test('nothing was sent to the store for any of them', () => {
    expect(backend.requestCount()).toBe(0);
  });

  test('an unreachable endpoint is a store error (exit 4), in one line', async () => {
    const result = await runCli(
      ['run', '--store', 's3://ci-locks/pipelines', '--name', 'x', '--', 'true'],
      backend.env({ AWS_ENDPOINT_URL: `http://127.0.0.1:${closedPort}` }),
    );
    expect(expectOneLine(result)).toMatch(/^latch run: store error: .*could not connect to S3.*ECONNREFUSED/);
    expect(result.code).toBe(4);
  });

  test('a missing bucket is a store error (exit 4) naming the bucket', async () => {
    const result = await runCli(['status', '--store', 's3://no-such-bucket/x', '--name', 'x'], backend.env());
    expect(expectOneLine(result)).toMatch(/^latch status: store error: .*"no-such-bucket" does not exist/);
    expect(result.code).toBe(4);
  });

  test('a missing region says how to set one', async () => {
    const env = backend.env();
    delete env.AWS_REGION;
    const result = await runCli(['status', '--store', 's3://ci-locks', '--name', 'x'], env);
    expect(expectOneLine(result)).toMatch(/Region is missing.*Set AWS_REGION/);
    expect(result.code).toBe(4);
  });
});

describe('help and version', () => {
  const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

  test('latch --help lists the commands and stores', async () => {
    const result = await runCli(['--help'], baseEnv());
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: latch <command> \[options\]/);
    for (const word of [
      'run',
      'acquire',
      'release',
      'status',
      'ls',
      'watch',
      'force-release',
      's3://',
      's3+list://',
      'dynamodb://',
      'memory:',
    ]) {
      expect(result.stdout).toContain(word);
    }
  });

  test('latch without a command prints the help on stderr and exits 2', async () => {
    const result = await runCli([], baseEnv());
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^Usage: latch <command>/);
  });

  test('latch run --help (built CLI)', async () => {
    const result = await runCli(['run', '--help'], baseEnv());
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: latch run \[options\] -- <command> \[args...\]\n/);
    expect(result.stdout).toMatch(
      /^ {2}--limit <n> {8}How many may hold the lock at once, 1 to 100 \(default 1\)/m,
    );
  });

  test.each(['run', 'acquire', 'release', 'status', 'ls', 'watch', 'force-release'])(
    'latch %s --help and latch help %s (in process)',
    async (command) => {
      const out: string[] = [];
      expect(await main([command, '--help'], {}, { out: (l) => out.push(l) })).toBe(0);
      expect(out[0]).toMatch(new RegExp(`^Usage: latch ${command} `));
      expect(out[0]).toMatch(/Exit codes:/);
      const viaHelp: string[] = [];
      expect(await main(['help', command], {}, { out: (l) => viaHelp.push(l) })).toBe(0);
      expect(viaHelp).toEqual(out);
    },
  );

  test('latch --version prints the package version', async () => {
    const result = await runCli(['--version'], baseEnv());
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n` });
  });
});
