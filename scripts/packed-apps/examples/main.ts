// Runs core's README examples as a user's app would: compiled by this app's tsc against the
// packed packages, on the local S3 server and DynamoDB Local from the packed @latch/testing;
// and the CLI's example scripts with the packed `latch` bin. Each example gets the outcome the
// package's own tests expect of it (core's test/examples.test.ts and test/telemetry.test.ts,
// the CLI's test/readme.test.ts). Prints `RAN <package>/<file>: <what it did>` per example, or
// `FAILED <package>/<file>: <why>` and exits 1 at the first that fails.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import {
  dynamoStore,
  ensureLockTable,
  LockClient,
  LockTimeoutError,
  memoryStore,
  s3Store,
} from '@latch/core';
import { type DynamoDBLocal, type S3Server, startDynamoDBLocal, startS3Server } from '@latch/testing';
import { MetricReader } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { chargeInvoice } from './examples/core/dynamodb-invoice.js';
import { exportsPerCustomer } from './examples/core/export-limit.js';
import { acquireInJobOne, releaseInJobTwo } from './examples/core/handoff.js';
import { runScheduler } from './examples/core/leader-election.js';
import { quickStart } from './examples/core/quick-start.js';
import { deployOnce } from './examples/core/s3-deploy-lock.js';
import { migrateOnce } from './examples/core/s3-list-lock.js';
import { nightlyReport, tracedLocks } from './examples/core/telemetry.js';
import { transfer } from './examples/core/transfer.js';

/** DynamoDB Local's files: a user passes `jarDir` the same way for one they downloaded. */
const jarDir = process.env.DYNAMODB_LOCAL_JAR_DIR;
/** Credentials DynamoDB Local accepts; it checks none. */
const local = { region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } };
/** DynamoDB Local, started by the first example that needs it. */
let ddb: DynamoDBLocal | undefined;
/** The app's folder: its node_modules/.bin holds the packed CLI's `latch`, as after npm install. */
const appDir = fileURLToPath(new URL('../', import.meta.url));

/** Each example (package folder/file) and its run, which resolves with what it did. */
const scenarios: Array<[file: string, run: () => Promise<string>]> = [
  ['core/quick-start.ts', runQuickStart],
  ['core/export-limit.ts', runExportLimit],
  ['core/transfer.ts', runTransfer],
  ['core/s3-deploy-lock.ts', runS3DeployLock],
  ['core/s3-list-lock.ts', runS3ListLock],
  ['core/dynamodb-invoice.ts', () => onDynamoDB(runDynamoDBInvoice)],
  ['core/lambda.ts', () => onDynamoDB(runLambda)],
  ['core/leader-election.ts', runLeaderElection],
  ['core/handoff.ts', runHandoff],
  ['core/telemetry.ts', runTelemetry],
  ['cli/deploy-pipeline.sh', runDeployPipeline],
  ['cli/limited-deploys.sh', runLimitedDeploys],
];

async function runQuickStart(): Promise<string> {
  const log = await quickStart();
  assert.deepEqual(log, [
    'building the report with fencing token 1',
    'second run, token 2',
    'now free, last token 2, data {"lastRun":"2026-11-23"}',
  ]);
  return log.join('; ');
}

async function runExportLimit(): Promise<string> {
  const log = await exportsPerCustomer();
  assert.deepEqual(log, [
    'running exports with tokens 1 and 2',
    'third export must wait',
    '2 of 2 slots taken',
    'next export got token 3',
  ]);
  return log.join('; ');
}

async function runTransfer(): Promise<string> {
  const there = await transfer('alice', 'bob');
  const back = await transfer('bob', 'alice');
  assert.equal(there, 'moved money from alice (token 1) to bob (token 1)');
  assert.equal(back, 'moved money from bob (token 2) to alice (token 2)');
  return `${there}; ${back}`;
}

async function runS3DeployLock(): Promise<string> {
  await using server = await startS3Server({ bucket: 'deploy-locks' });
  const s3 = new S3Client(server.clientConfig());
  try {
    const results = await Promise.all([
      deployOnce(s3, 'deploy-locks', 'v1'),
      deployOnce(s3, 'deploy-locks', 'v2'),
    ]);
    const [first, second] = results.sort();
    assert.match(first ?? '', /^deployed v\d as deploy #1$/);
    assert.match(second ?? '', /^deployed v\d as deploy #2$/);
    return `two deploys at once on the S3 server: ${results.join(', ')}`;
  } finally {
    s3.destroy();
  }
}

async function runS3ListLock(): Promise<string> {
  await using server = await startS3Server({ bucket: 'plain-bucket', conditionalWrites: false });
  const s3 = new S3Client(server.clientConfig());
  try {
    const results = await Promise.all([
      migrateOnce(s3, 'plain-bucket', 'runner-a'),
      migrateOnce(s3, 'plain-bucket', 'runner-b'),
    ]);
    const tokens = results.map((line) => Number(/token (\d{13})$/.exec(line)?.[1]));
    assert.deepEqual(results.map((line) => line.split(' ')[0]).sort(), ['runner-a', 'runner-b']);
    assert.ok(
      tokens.every((token) => Number.isSafeInteger(token)),
      `tokens are not times in ms: ${results}`,
    );
    assert.notEqual(tokens[0], tokens[1]);
    return `two migrations at once on an S3 server without conditional writes: ${results.join(', ')}`;
  } finally {
    s3.destroy();
  }
}

/** Runs `fn` with a client of DynamoDB Local (started once) and its table `locks`. */
async function onDynamoDB(fn: (dynamodb: DynamoDBClient, endpoint: string) => Promise<string>) {
  assert.ok(jarDir, 'DYNAMODB_LOCAL_JAR_DIR is not set');
  ddb ??= await startDynamoDBLocal({ jarDir });
  const dynamodb = new DynamoDBClient({ endpoint: ddb.endpoint, ...local });
  try {
    await ensureLockTable(dynamodb, { table: 'locks' });
    return await fn(dynamodb, ddb.endpoint);
  } finally {
    dynamodb.destroy();
  }
}

async function runDynamoDBInvoice(dynamodb: DynamoDBClient): Promise<string> {
  const charges = await Promise.all([
    chargeInvoice(dynamodb, 'locks', 'inv-1'),
    chargeInvoice(dynamodb, 'locks', 'inv-1'),
  ]);
  assert.deepEqual(
    charges.sort((x, y) => x - y),
    [1250, 2500],
  );
  return `two charges at once on DynamoDB Local: ${charges.join(' then ')} cents`;
}

async function runLambda(dynamodb: DynamoDBClient, endpoint: string): Promise<string> {
  // What the Lambda runtime gives the function: its environment, and a context per invocation.
  Object.assign(process.env, {
    LOCK_TABLE: 'locks',
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    AWS_REGION: local.region,
    AWS_ACCESS_KEY_ID: local.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: local.credentials.secretAccessKey,
  });
  const { handler } = await import('./examples/core/lambda.js');
  const secondsLeft = (seconds: number) => ({ getRemainingTimeInMillis: () => seconds * 1000 });
  const observer = new LockClient({ store: dynamoStore({ client: dynamodb, table: 'locks' }) });

  const invokedAt = Date.now();
  const results = await Promise.all([
    handler({ orderId: 'o-1' }, secondsLeft(10)),
    handler({ orderId: 'o-1' }, secondsLeft(10)),
  ]);
  const answeredAt = Date.now();
  assert.deepEqual(results.map((r) => r.fencingToken).sort(), [1, 2]);
  // The lease is what was left of the invocation (10 s less the 1 s kept back).
  for (const { leaseEndsAt } of results) {
    assert.ok(
      leaseEndsAt !== null && leaseEndsAt >= invokedAt + 9000 && leaseEndsAt <= answeredAt + 9000,
      `lease ended at ${leaseEndsAt}, not 9 s after the invocation [${invokedAt}, ${answeredAt}]`,
    );
  }
  // Released before the handler returned.
  assert.equal((await observer.inspect('orders/o-1')).state, 'free');

  // The wait is what is left once the work (2 s) is provided for: 3.5 s left, 0.5 s of wait.
  const held = await observer.acquire('orders/o-1');
  const waited = await handler({ orderId: 'o-1' }, secondsLeft(3.5)).catch((e: unknown) => e);
  assert.ok(waited instanceof LockTimeoutError, `expected a LockTimeoutError, got ${String(waited)}`);
  assert.match(waited.message, /Timed out after 500 ms/);
  await held.release();
  // Too little time left for the work: no lock taken at all.
  await assert.rejects(handler({ orderId: 'o-1' }, secondsLeft(2.5)), {
    message: '1500 ms left, the work needs 2000 ms',
  });
  // Neither took the lock after the observer's hold.
  assert.equal((await observer.inspect('orders/o-1')).fencingToken, held.fencingToken);
  await observer.close();
  return (
    `two invocations at once on DynamoDB Local got tokens ${results.map((r) => r.fencingToken).join(', ')}, ` +
    'leases sized to the invocation, released before returning; a held lock → LockTimeoutError after ' +
    '500 ms; too little time → refused before locking'
  );
}

async function runLeaderElection(): Promise<string> {
  const store = memoryStore();
  const terms: Array<[string, number]> = [];
  const a = runScheduler(store, 'replica-a', (term) => terms.push(['replica-a', term]));
  await until('replica-a elected', () => terms.length === 1);
  const b = runScheduler(store, 'replica-b', (term) => terms.push(['replica-b', term]));
  await a.stop();
  await until('replica-b elected', () => terms.length === 2);
  await b.stop();
  assert.deepEqual(terms, [
    ['replica-a', 1],
    ['replica-b', 2],
  ]);
  return 'replica-a led term 1, resigned, replica-b took term 2';
}

async function runHandoff(): Promise<string> {
  const store = memoryStore();
  const handle = await acquireInJobOne(store);
  const observer = new LockClient({ store });
  assert.equal((await observer.inspect('pipeline/deploy')).context, 'pipeline run 1234');
  await releaseInJobTwo(store, handle);
  const after = await observer.inspect('pipeline/deploy');
  assert.equal(after.state, 'free');
  assert.deepEqual(after.data, { deployed: 'v1.4.2' });
  return 'acquired in one job, released by its handle in another, with data';
}

/** A metric reader whose points the check collects itself. */
class CollectingReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

async function runTelemetry(): Promise<string> {
  const spans = new InMemorySpanExporter();
  const reader = new CollectingReader();
  const locks = tracedLocks(spans, reader);
  assert.equal(await nightlyReport(locks, 'acme'), 1);
  assert.equal(await nightlyReport(locks, 'globex'), 1);
  const attempts = spans.getFinishedSpans().filter((span) => span.name === 'latch.acquire');
  assert.deepEqual(
    attempts.map((span) => [span.attributes['latch.lock.key'], span.attributes.tenant]),
    [
      ['reports', 'acme'],
      ['reports', 'globex'],
    ],
  );
  const { resourceMetrics } = await reader.collect();
  const acquisitions = resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .find((metric) => metric.descriptor.name === 'latch.lock.acquisitions');
  // One series for both tenants: the label, not the key, and no span attributes.
  assert.deepEqual(
    acquisitions?.dataPoints.map((point) => [point.attributes, point.value]),
    [[{ 'latch.store.kind': 'memory', 'latch.lock.key': 'reports', 'latch.acquire.outcome': 'acquired' }, 2]],
  );
  await locks.close();
  return `${attempts.length} acquire spans keyed by label, one acquisitions series of 2`;
}

/**
 * Runs one of the CLI's example scripts with bash in a folder of its own, holding the steps it
 * calls (`./deploy.sh`, ...), with `latch` on the PATH and the S3 server as the AWS endpoint.
 */
async function runScript(
  name: string,
  endpoint: string,
  steps: Record<string, string>,
  env: Record<string, string> = {},
): Promise<{ status: number | null; stdout: string; stderr: string; log: string }> {
  const work = mkdtempSync(join(tmpdir(), 'latch-example-script-'));
  try {
    const log = join(work, 'steps.log');
    for (const [file, text] of Object.entries(steps)) {
      writeFileSync(join(work, file), `#!/bin/sh\n${text}\n`);
      chmodSync(join(work, file), 0o755);
    }
    const child = spawn('bash', [join(appDir, 'src/examples/cli', name)], {
      cwd: work,
      env: {
        ...process.env,
        PATH: `${join(appDir, 'node_modules/.bin')}:${process.env.PATH}`,
        AWS_ENDPOINT_URL: endpoint,
        LOG: log, // where the steps write what they did
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const status = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    let written = '';
    try {
      written = readFileSync(log, 'utf8');
    } catch {
      // no step ran
    }
    return { status, stdout, stderr, log: written };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** What the lock `key` looks like in the CI bucket of the CLI's examples. */
async function inspectCiLock(server: S3Server, key: string) {
  const client = new S3Client(server.clientConfig());
  try {
    const locks = new LockClient({ store: s3Store({ client, bucket: 'my-ci-locks', prefix: 'locks/' }) });
    return await locks.inspect(key);
  } finally {
    client.destroy();
  }
}

async function runDeployPipeline(): Promise<string> {
  await using server = await startS3Server({ bucket: 'my-ci-locks' });
  const result = await runScript(
    'deploy-pipeline.sh',
    server.endpoint,
    {
      'deploy.sh': `echo "deploy $1 token=\${LATCH_FENCING_TOKEN:-none}" >> "$LOG"`,
      'migrate.sh': 'echo "migrate $1" >> "$LOG"',
    },
    { RELEASE: 'v1.4.2' },
  );
  assert.equal(result.stderr, '');
  assert.equal(result.status, 0);
  assert.equal(result.log, 'deploy production token=1\nmigrate production\ndeploy production token=none\n');
  assert.match(
    result.stdout,
    /^(?:passed .*\n|skipped .*\n)+safe: Latch can lock on this s3 store \(14 requests\)\.\nreleased lock "deploy\/production"\nlock "deploy\/production": free \(last fencing token 2\)\n$/,
  );
  const after = await inspectCiLock(server, 'deploy/production');
  assert.equal(after.state, 'free');
  assert.equal(after.fencingToken, 2);
  return 'latch doctor, latch run, then acquire / release by handle / status, with the packed bin on the S3 server';
}

async function runLimitedDeploys(): Promise<string> {
  await using server = await startS3Server({ bucket: 'my-ci-locks' });
  // Each deploy stays busy a moment, so that the three overlap if nothing holds them back.
  const result = await runScript('limited-deploys.sh', server.endpoint, {
    'deploy.sh': 'echo "start $2 $LATCH_FENCING_TOKEN" >> "$LOG"\nsleep 1\necho "end $2" >> "$LOG"',
  });
  assert.equal(result.status, 0, result.stderr);
  // The only thing latch may say: that a deploy waits for a place.
  for (const line of result.stderr.split('\n').filter(Boolean)) {
    assert.match(line, /^latch run: waiting up to 10m for lock "deploy\/staging" \(--limit 2\), held by /);
  }
  const lines = result.log.split('\n').filter(Boolean);
  assert.deepEqual(
    lines
      .filter((line) => line.startsWith('start '))
      .map((line) => line.split(' ')[1])
      .sort(),
    ['api', 'web', 'worker'],
  );
  let inside = 0;
  for (const line of lines) {
    inside += line.startsWith('start ') ? 1 : -1;
    assert.ok(inside <= 2, `more than two deploys at once: ${lines.join(', ')}`);
  }
  const after = await inspectCiLock(server, 'deploy/staging');
  assert.equal(after.state, 'free');
  assert.equal(after.fencingToken, 3);
  assert.deepEqual(after.holders, []);
  return 'three deploys, never more than two at once, with the packed bin on the S3 server';
}

async function until(what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: did not happen within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// Last, once every declaration above (the classes too) is initialized. The first failure ends
// the run: after it, the examples that wait (up to 5 minutes for a deploy) could wait in vain.
let failed = false;
console.log(`PLAN ${JSON.stringify(scenarios.map(([file]) => file))}`);
try {
  for (const [file, run] of scenarios) {
    try {
      console.log(`RAN ${file}: ${await run()}`);
    } catch (error) {
      failed = true;
      const why = error instanceof Error ? (error.stack ?? error.message) : String(error);
      console.log(`FAILED ${file}: ${why.replaceAll('\n', '\n    ')}`);
      break;
    }
  }
} finally {
  await ddb?.stop();
}
// The Lambda example's module-scope client is never closed, as on Lambda: end here.
process.exit(failed ? 1 : 0);
