import { type S3Server, startS3Server } from '@latch/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Backend, startDynamoBackend, startS3Backend } from './helpers/backends.js';
import { runCli } from './helpers/cli-process.js';

/** Exactly one line on stderr, nothing on stdout, no stack trace: the line, without its newline. */
function oneLine(result: { stdout: string; stderr: string }): string {
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/^latch [a-z]+: [^\n]*\n$/);
  return result.stderr.trimEnd();
}

/** Library advice and DynamoDB status words a CLI user cannot act on. */
function expectCliWords(line: string): void {
  for (const libraryWord of [
    's3Store(',
    's3ListStore(',
    'dynamoStore(',
    'ensureLockTable',
    'ACTIVE',
    'client you passed',
  ]) {
    expect(line).not.toContain(libraryWord);
  }
}

describe('store errors speak of the --store URL and the AWS environment (S3)', () => {
  let s3: Awaited<ReturnType<typeof startS3Backend>>;
  /** An S3 that refuses the backend's access key (AccessDenied) and does not know any other. */
  let refusing: S3Server;
  beforeAll(async () => {
    s3 = await startS3Backend();
    refusing = await startS3Server({
      bucket: 'ci-locks',
      accessKeys: { [s3.env().AWS_ACCESS_KEY_ID ?? '']: 'deny' },
    });
  });
  afterAll(async () => {
    await refusing?.stop();
    await s3?.stop();
  });

  test('a missing bucket names it and the store URL to fix', async () => {
    const result = await runCli(
      ['status', '--store', 's3://no-such-bucket/ci/locks', '--name', 'x'],
      s3.env(),
    );
    const line = oneLine(result);
    expect(line).toBe(
      'latch status: store error: bucket "no-such-bucket" does not exist; create it, or fix the store URL s3://no-such-bucket/ci/locks',
    );
    expectCliWords(line);
    expect(result.code).toBe(4);
  });

  test('no credentials at all: "no AWS credentials were found", and how to provide them', async () => {
    const env = s3.env();
    delete env.AWS_ACCESS_KEY_ID;
    delete env.AWS_SECRET_ACCESS_KEY;
    const before = s3.requestCount();
    const result = await runCli(['status', '--store', 's3://ci-locks/pipelines', '--name', 'x'], env);
    const line = oneLine(result);
    expect(line).toBe(
      'latch status: store error: no AWS credentials were found; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (plus AWS_SESSION_TOKEN for temporary ones) or AWS_PROFILE, or run where a role provides them (in GitHub Actions: aws-actions/configure-aws-credentials)',
    );
    expect(line).not.toContain('rejected');
    expect(result.code).toBe(4);
    // Nothing could be signed, so nothing was sent.
    expect(s3.requestCount()).toBe(before);
  });

  test('credentials the service refuses: "credentials were rejected", without quoting the key', async () => {
    const env = s3.env({ AWS_ENDPOINT_URL: refusing.endpoint, AWS_ACCESS_KEY_ID: 'AKIAEXAMPLEKEY123456' });
    const result = await runCli(['status', '--store', 's3://ci-locks/pipelines', '--name', 'x'], env);
    const line = oneLine(result);
    expect(line).toBe(
      "latch status: store error: the AWS credentials were rejected (InvalidAccessKeyId); check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN or AWS_PROFILE, and that this machine's clock is right",
    );
    expect(line).not.toContain('AKIAEXAMPLEKEY123456');
    expect(result.code).toBe(4);
  });

  test('access denied names the bucket and the permissions the store needs', async () => {
    const env = s3.env({ AWS_ENDPOINT_URL: refusing.endpoint });
    const result = await runCli(['status', '--store', 's3://ci-locks/pipelines', '--name', 'x'], env);
    const line = oneLine(result);
    expect(line).toBe(
      'latch status: store error: access denied to bucket "ci-locks": the AWS credentials in use need s3:GetObject and s3:PutObject on ci-locks/pipelines/*, and s3:ListBucket on bucket ci-locks',
    );
    expectCliWords(line);
    expect(result.code).toBe(4);
  });
});

describe('store errors speak of the --store URL and the AWS environment (DynamoDB)', () => {
  let dynamo: Backend;
  beforeAll(async () => {
    dynamo = await startDynamoBackend();
  });
  afterAll(async () => {
    await dynamo?.stop();
  });

  test('a missing table names it and how to create it with the AWS CLI', async () => {
    const env = dynamo.env();
    const result = await runCli(['status', '--store', 'dynamodb://no-such-table', '--name', 'x'], env);
    const line = oneLine(result);
    expect(line).toBe(
      `latch status: store error: table "no-such-table" does not exist (or is still being created); create it with a string partition key "pk", e.g. aws dynamodb create-table --table-name no-such-table --attribute-definitions AttributeName=pk,AttributeType=S --key-schema AttributeName=pk,KeyType=HASH --billing-mode PAY_PER_REQUEST --endpoint-url ${env.AWS_ENDPOINT_URL}, or fix the store URL dynamodb://no-such-table`,
    );
    expectCliWords(line);
    expect(result.code).toBe(4);
  });

  test('no credentials: the same words as for S3', async () => {
    const env = dynamo.env();
    delete env.AWS_ACCESS_KEY_ID;
    delete env.AWS_SECRET_ACCESS_KEY;
    const result = await runCli(['run', '--store', dynamo.store, '--name', 'x', '--', 'true'], env);
    expect(oneLine(result)).toMatch(
      /^latch run: store error: no AWS credentials were found; set AWS_ACCESS_KEY_ID/,
    );
    expect(result.code).toBe(4);
  });
});
