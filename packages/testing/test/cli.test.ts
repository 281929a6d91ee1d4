import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { callDynamoDB } from '../src/dynamodb-http.js';
import { cliPath, ensureBuilt } from './support/ensure-built.js';
import { childrenMatching, eventuallyRefuses, waitUntilDead } from './support/processes.js';
import { runNode } from './support/run-node.js';

const cli = (args: string[], env?: NodeJS.ProcessEnv) => runNode([cliPath, ...args], env);
const BACKEND_PROCESS = /DynamoDBLocal\.jar|redis-server/;

beforeAll(ensureBuilt, 120_000);

describe('latch-testing check', () => {
  it('round-trips every backend, prints a ✓ line per backend and exits 0', async () => {
    const result = await cli(['check']).finished;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/✓ s3 .*412/);
    expect(result.stdout).toMatch(/✓ dynamodb .*ConditionalCheckFailed/);
    expect(result.stdout).toMatch(/✓ redis .*refused/);
    expect(result.stdout).toMatch(/all 3 backends OK/);
  });

  it('exits 1 with a ✗ line and the reason when a backend cannot start', async () => {
    const result = await cli(['check', '--redis'], { ...process.env, PATH: '/nonexistent' }).finished;
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/✗ redis .*redis-server.*not found/);
    expect(result.stdout).toContain('apt-get install -y redis-server');
    expect(result.stdout).toMatch(/FAILED \(redis\)/);
    expect(result.stdout).not.toMatch(/dynamodb|s3/);
  });
});

describe('latch-testing up', () => {
  it('--json prints endpoints that answer; SIGTERM stops the backends and their processes', async () => {
    const up = cli(['up', '--json', '--bucket', 'cli-locks', '--table', 'cli-table']);
    const endpoints = JSON.parse(await up.line(/^\{/)) as {
      s3: { endpoint: string; bucket: string };
      dynamodb: { endpoint: string; table: string };
      redis: { url: string };
    };
    expect(up.stdout()).toMatch(/^s3 +http:\/\/127\.0\.0\.1:\d+/m);
    expect(endpoints.s3.bucket).toBe('cli-locks');

    const bucket = await fetch(`${endpoints.s3.endpoint}/cli-locks`, { method: 'HEAD' });
    expect(bucket.status).toBe(200);
    expect(up.stdout()).toMatch(/^dynamodb +http:\/\/127\.0\.0\.1:\d+ +\(table: cli-table, /m);
    expect(endpoints.dynamodb.table).toBe('cli-table');
    const table = await callDynamoDB(endpoints.dynamodb.endpoint, 'DescribeTable', {
      TableName: 'cli-table',
    });
    expect(table.body.Table).toMatchObject({
      TableStatus: 'ACTIVE',
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    });
    const redis = new Redis(endpoints.redis.url);
    expect(await redis.ping()).toBe('PONG');
    redis.disconnect();

    const children = childrenMatching(up.child.pid!, BACKEND_PROCESS);
    expect(children).toHaveLength(2);

    up.child.kill('SIGTERM');
    const result = await up.finished;
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/SIGTERM received, stopping/);
    expect(await waitUntilDead(children.map((c) => c.pid))).toEqual([]);
    const ports = [endpoints.s3.endpoint, endpoints.dynamodb.endpoint, endpoints.redis.url].map((u) =>
      Number(new URL(u).port),
    );
    for (const port of ports) expect(await eventuallyRefuses(port)).toBe(true);
  });

  it('creates a lock table named "locks" by default, as it does a bucket', async () => {
    const up = cli(['up', '--dynamodb', '--json']);
    try {
      const endpoints = JSON.parse(await up.line(/^\{/)) as { dynamodb: { endpoint: string; table: string } };
      expect(endpoints.dynamodb.table).toBe('locks');
      const tables = await callDynamoDB(endpoints.dynamodb.endpoint, 'ListTables', {});
      expect(tables.body.TableNames).toEqual(['locks']);
    } finally {
      up.child.kill('SIGTERM');
    }
    expect((await up.finished).code).toBe(0);
  });

  it('starts only the selected backends', async () => {
    const up = cli(['up', '--redis', '--json']);
    const endpoints = JSON.parse(await up.line(/^\{/));
    expect(Object.keys(endpoints)).toEqual(['redis']);
    up.child.kill('SIGINT');
    expect((await up.finished).code).toBe(0);
    expect(await eventuallyRefuses(Number(new URL(endpoints.redis.url).port))).toBe(true);
  });
});

// Independent short-lived processes: run them side by side.
describe.concurrent('latch-testing command line', () => {
  it.each([
    [['up', '--nope'], /^latch-testing: unknown option '--nope' \(see 'latch-testing up --help'\)$/],
    [['check', '--s4'], /^latch-testing: unknown option '--s4'/],
    [['up', '--redis-port', 'abc'], /^latch-testing: --redis-port must be a port number/],
    [['frobnicate'], /^latch-testing: unknown command 'frobnicate'/],
    [[], /^latch-testing: missing command/],
  ])('%j → exit 2 with one line, no stack trace', async (args, message) => {
    const result = await cli(args).finished;
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr.trimEnd()).toMatch(message);
  });

  it.each([
    [['--help'], /Usage: latch-testing <command>/],
    [['up', '--help'], /Usage: latch-testing up/],
    [['check', '-h'], /Usage: latch-testing check/],
  ])('%j prints usage and exits 0', async (args, usage) => {
    const result = await cli(args).finished;
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(usage);
  });
});
