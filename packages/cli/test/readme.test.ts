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
const script = fileURLToPath(new URL('../examples/deploy-pipeline.sh', import.meta.url));
const bin = fileURLToPath(new URL('../dist/bin.js', import.meta.url));

test('the README shows examples/deploy-pipeline.sh exactly as tested', () => {
  expect(readme).toContain(readFileSync(script, 'utf8').trim());
});

test('examples/deploy-pipeline.sh runs against a local S3 server', async () => {
  await using server = await startS3Server({ bucket: 'my-ci-locks' });
  const work = mkdtempSync(join(tmpdir(), 'latch-cli-example-'));
  const binDir = join(work, 'bin');
  mkdirSync(binDir);
  const log = join(work, 'steps.log');
  const executable = (path: string, text: string) => {
    writeFileSync(path, text);
    chmodSync(path, 0o755);
  };
  // `latch` on the PATH, as after `npm install --global @latch/cli`.
  executable(join(binDir, 'latch'), `#!/bin/sh\nexec "${process.execPath}" "${bin}" "$@"\n`);
  executable(
    join(work, 'deploy.sh'),
    `#!/bin/sh\necho "deploy $1 token=\${LATCH_FENCING_TOKEN:-none}" >> "${log}"\n`,
  );
  executable(join(work, 'migrate.sh'), `#!/bin/sh\necho "migrate $1" >> "${log}"\n`);

  // Asynchronously: the S3 server answers from this very process.
  const result = await runBash(script, {
    cwd: work,
    env: baseEnv({
      PATH: `${binDir}:${process.env.PATH}`,
      RELEASE: 'v1.4.2',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_ENDPOINT_URL: server.endpoint,
    }),
  });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  expect(readFileSync(log, 'utf8')).toBe(
    'deploy production token=1\nmigrate production\ndeploy production token=none\n',
  );
  expect(result.stdout).toMatch(
    /^released lock "deploy\/production"\nlock "deploy\/production": free \(last fencing token 2\)\n$/,
  );

  const client = new S3Client(server.clientConfig());
  const locks = new LockClient({ store: s3Store({ client, bucket: 'my-ci-locks', prefix: 'locks/' }) });
  expect(await locks.inspect('deploy/production')).toMatchObject({ state: 'free', fencingToken: 2 });
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
