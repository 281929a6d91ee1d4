import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { S3Client } from '@aws-sdk/client-s3';
import { LockClient, s3Store } from '@latch/core';
import { startS3Server } from '@latch/testing';
import { expect, test } from 'vitest';
import { baseEnv } from './helpers/cli-process.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const example = (name: string) => fileURLToPath(new URL(`../examples/${name}`, import.meta.url));
const script = example('deploy-pipeline.sh');
const limitedScript = example('limited-deploys.sh');
const bin = fileURLToPath(new URL('../dist/bin.js', import.meta.url));

test.each(['deploy-pipeline.sh', 'limited-deploys.sh'])(
  'the README shows examples/%s exactly as tested',
  (name) => {
    expect(readme).toContain(readFileSync(example(name), 'utf8').trim());
  },
);

/** A working directory with `latch` on the PATH, as after `npm install --global @latch/cli`. */
function exampleSetup(endpoint: string, extraEnv: Record<string, string> = {}) {
  const work = mkdtempSync(join(tmpdir(), 'latch-cli-example-'));
  const binDir = join(work, 'bin');
  mkdirSync(binDir);
  executable(join(binDir, 'latch'), `#!/bin/sh\nexec "${process.execPath}" "${bin}" "$@"\n`);
  const env = baseEnv({
    PATH: `${binDir}:${process.env.PATH}`,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL: endpoint,
    ...extraEnv,
  });
  return { work, log: join(work, 'steps.log'), env };
}

function executable(path: string, text: string): void {
  writeFileSync(path, text);
  chmodSync(path, 0o755);
}

test('examples/deploy-pipeline.sh runs against a local S3 server', async () => {
  await using server = await startS3Server({ bucket: 'my-ci-locks' });
  const { work, log, env } = exampleSetup(server.endpoint, { RELEASE: 'v1.4.2' });
  executable(
    join(work, 'deploy.sh'),
    `#!/bin/sh\necho "deploy $1 token=\${LATCH_FENCING_TOKEN:-none}" >> "${log}"\n`,
  );
  executable(join(work, 'migrate.sh'), `#!/bin/sh\necho "migrate $1" >> "${log}"\n`);

  // Asynchronously: the S3 server answers from this very process.
  const result = await runBash(script, { cwd: work, env });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  expect(readFileSync(log, 'utf8')).toBe(
    'deploy production token=1\nmigrate production\ndeploy production token=none\n',
  );
  expect(result.stdout).toMatch(
    /^(?:passed .*\n|skipped .*\n)+safe: Latch can lock on this s3 store \(14 requests\)\.\nreleased lock "deploy\/production"\nlock "deploy\/production": free \(last fencing token 2\)\n$/,
  );

  const client = new S3Client(server.clientConfig());
  const locks = new LockClient({ store: s3Store({ client, bucket: 'my-ci-locks', prefix: 'locks/' }) });
  expect(await locks.inspect('deploy/production')).toMatchObject({ state: 'free', fencingToken: 2 });
  client.destroy();
});

test('examples/limited-deploys.sh deploys the three services, never more than two at once', async () => {
  await using server = await startS3Server({ bucket: 'my-ci-locks' });
  const { work, log, env } = exampleSetup(server.endpoint);
  // Each deploy stays busy a moment, so that the three overlap if nothing holds them back.
  executable(
    join(work, 'deploy.sh'),
    `#!/bin/sh\necho "start $2 $LATCH_FENCING_TOKEN" >> "${log}"\nsleep 1\necho "end $2" >> "${log}"\n`,
  );

  // Asynchronously: the S3 server answers from this very process.
  const result = await runBash(limitedScript, { cwd: work, env });
  expect(result.status).toBe(0);
  // The only thing latch may say: that a deploy waits for a place.
  for (const line of result.stderr.split('\n').filter(Boolean)) {
    expect(line).toMatch(/^latch run: waiting up to 10m for lock "deploy\/staging" \(--limit 2\), held by /);
  }
  const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  expect(
    lines
      .filter((line) => line.startsWith('start '))
      .map((line) => line.split(' ')[1])
      .sort(),
  ).toEqual(['api', 'web', 'worker']);
  let inside = 0;
  for (const line of lines) {
    inside += line.startsWith('start ') ? 1 : -1;
    expect(inside).toBeLessThanOrEqual(2);
  }

  const client = new S3Client(server.clientConfig());
  const locks = new LockClient({ store: s3Store({ client, bucket: 'my-ci-locks', prefix: 'locks/' }) });
  expect(await locks.inspect('deploy/staging')).toMatchObject({
    state: 'free',
    fencingToken: 3,
    holders: [],
  });
  client.destroy();
});

function runBash(
  file: string,
  options: { cwd: string; env: Record<string, string> },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [file], { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}
