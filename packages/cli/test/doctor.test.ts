import { createServer } from 'node:net';
import { type S3Personality, type S3PersonalityName, type S3Server, startS3Server } from '@latch/testing';
import { afterAll, describe, expect, test } from 'vitest';
import { startDynamoBackend, useBackend } from './helpers/backends.js';
import { baseEnv, runCli } from './helpers/cli-process.js';

// `latch doctor` run as a pipeline runs it: the built CLI against a local store, read by its exit
// code and its --json line.

const servers: S3Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
});

function envFor(endpoint: string) {
  return baseEnv({
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL: endpoint,
  });
}

async function s3Like(personality?: S3PersonalityName | S3Personality) {
  const server = await startS3Server({ bucket: 'ci-locks', ...(personality ? { personality } : {}) });
  servers.push(server);
  return server;
}

describe('latch doctor against S3 stores', () => {
  test('a store that behaves: exit 0, every check passed, and nothing left behind', async () => {
    const server = await s3Like();
    const result = await runCli(['doctor', 's3://ci-locks/pipelines', '--json'], envFor(server.endpoint));
    expect(result.code).toBe(0);
    const verdict = JSON.parse(result.stdout);
    expect(verdict).toMatchObject({ store: 's3', safe: true, requests: 14 });
    expect(verdict.checks.map((c: { outcome: string }) => c.outcome)).not.toContain('failed');
    expect(verdict.clock.beyondTolerance).toBe(false);
    expect(server.requestLog.length).toBe(14);
    // Every probe write was under its prefix, and was removed again.
    const keys = new Set(server.requestLog.map((entry) => entry.key));
    expect([...keys].every((key) => key?.startsWith('pipelines/__latch-verify__/'))).toBe(true);
  });

  test.each([
    ['ignores-if-none-match-on-put', 'create-once'],
    ['ignores-if-match-on-put', 'replace-stale'],
    ['eventually-consistent', 'read-after-write'],
    ['no-conditional-writes', 'create-once'],
  ] as const)('%s: exit 3, and the words name %s and what to do', async (personality, check) => {
    const server = await s3Like(personality);
    const result = await runCli(['doctor', '--store', 's3://ci-locks/pipelines'], envFor(server.endpoint));
    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(new RegExp(`^(failed|refused) +${check}: `, 'm'));
    expect(result.stdout).toMatch(/^unsafe: do not lock on this s3 store/m);
  });

  test('a store that ignores If-Match on DELETE is told, and is still safe for locks: exit 0', async () => {
    const server = await s3Like('ignores-if-match-on-delete');
    const result = await runCli(['doctor', 's3://ci-locks/locks'], envFor(server.endpoint));
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^failed +delete-stale \(not needed for locks\): /m);
  });

  test('a store clock beyond the tolerance is a warning, and exit 0; within it, none', async () => {
    const server = await s3Like({ clockOffsetMs: 30_000 });
    const skewed = await runCli(['doctor', 's3://ci-locks/x', '--tolerance', '5s'], envFor(server.endpoint));
    expect(skewed.code).toBe(0);
    expect(skewed.stdout).toMatch(/^warning +clock: .*beyond clock.toleranceMs 5000/m);
    const within = await runCli(
      ['doctor', 's3://ci-locks/x', '--tolerance', '1m', '--json'],
      envFor(server.endpoint),
    );
    expect(JSON.parse(within.stdout).clock.beyondTolerance).toBe(false);
    const untrusted = await runCli(
      ['doctor', 's3://ci-locks/x', '--untrusted-clock'],
      envFor(server.endpoint),
    );
    expect(untrusted.stdout).not.toMatch(/^warning/m);
  });

  test('an endpoint nothing listens on: exit 4, in one line', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const result = await runCli(['doctor', 's3://ci-locks/pipelines'], {
      ...envFor(`http://127.0.0.1:${port}`),
      AWS_MAX_ATTEMPTS: '1',
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/^latch doctor: store error: .*\n$/);
  });

  test('bad usage: exit 2 before any request', async () => {
    const server = await s3Like();
    const twice = await runCli(
      ['doctor', 's3://ci-locks/a', '--store', 's3://ci-locks/b'],
      envFor(server.endpoint),
    );
    expect(twice.code).toBe(2);
    const nonsense = await runCli(['doctor', 'ftp://ci-locks/a'], envFor(server.endpoint));
    expect(nonsense.code).toBe(2);
    expect(server.requestLog.length).toBe(0);
  });

  test('s3+list:// on a store without conditional writes: its listings are checked, exit 0', async () => {
    const server = await startS3Server({ bucket: 'ci-locks', conditionalWrites: false });
    servers.push(server);
    const result = await runCli(
      ['doctor', 's3+list://ci-locks/pipelines', '--json'],
      envFor(server.endpoint),
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ store: 's3-list', safe: true, requests: 13 });
  });
});

describe('latch doctor against DynamoDB', () => {
  const backend = useBackend(startDynamoBackend);

  test('DynamoDB Local passes every check, the one-request claim included', async () => {
    const result = await runCli(['doctor', backend().store, '--json'], backend().env());
    expect(result.code).toBe(0);
    const verdict = JSON.parse(result.stdout);
    expect(verdict).toMatchObject({ store: 'dynamodb', safe: true, requests: 17 });
    const outcomes = Object.fromEntries(
      verdict.checks.map((c: { name: string; outcome: string }) => [c.name, c.outcome]),
    );
    expect(outcomes['claim-once']).toBe('passed');
    expect(outcomes['create-once']).toBe('passed');
  });
});
