import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { dynamoStore, LockClient, s3ListStore, s3Store } from '@latch/core';
import { createLockTable, startDynamoDBLocal, startS3Server } from '@latch/testing';
import { afterAll, beforeAll } from 'vitest';
import { baseEnv } from './cli-process.js';

/** A real local backend, the --store URL that names it, and a client to check it from the test. */
export interface Backend {
  name: 's3' | 's3+list' | 'dynamodb';
  store: string;
  /** Environment for the CLI: region, dummy credentials, the local endpoint. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** A LockClient on the same store, for the test's own checks. */
  locks: LockClient;
  /** Fencing tokens count 1, 2, 3... and a free lock still reports its last one. */
  counterTokens: boolean;
  stop(): Promise<void>;
}

/** Starts the backend before the tests around the call and stops it after them; the getter returns it. */
export function useBackend(start: () => Promise<Backend>): () => Backend {
  let backend: Backend | undefined;
  beforeAll(async () => {
    backend = await start();
  });
  afterAll(async () => {
    await backend?.stop();
  });
  return () => backend!;
}

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

function cliEnv(endpoint: string) {
  return (extra: Record<string, string> = {}) =>
    baseEnv({
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_ENDPOINT_URL: endpoint,
      ...extra,
    });
}

export async function startS3Backend(): Promise<Backend & { requestCount(): number }> {
  const server = await startS3Server({ bucket: 'ci-locks' });
  const client = new S3Client(server.clientConfig());
  return {
    name: 's3',
    store: 's3://ci-locks/pipelines',
    env: cliEnv(server.endpoint),
    locks: new LockClient({ store: s3Store({ client, bucket: 'ci-locks', prefix: 'pipelines/' }) }),
    requestCount: () => server.requestLog.length,
    counterTokens: true,
    async stop() {
      client.destroy();
      await server.stop();
    },
  };
}

export async function startDynamoBackend(): Promise<Backend> {
  const local = await startDynamoDBLocal();
  const client = new DynamoDBClient({ endpoint: local.endpoint, region: 'us-east-1', credentials });
  try {
    await createLockTable(client, { table: 'ci-locks' });
  } catch (error) {
    client.destroy();
    await local.stop();
    throw error;
  }
  return {
    name: 'dynamodb',
    store: 'dynamodb://ci-locks',
    env: cliEnv(local.endpoint),
    locks: new LockClient({ store: dynamoStore({ client, table: 'ci-locks' }) }),
    counterTokens: true,
    async stop() {
      client.destroy();
      await local.stop();
    },
  };
}

/** An S3-compatible server without conditional writes, for the s3+list:// strategy. */
export async function startS3ListBackend(): Promise<Backend> {
  const server = await startS3Server({ bucket: 'ci-locks', conditionalWrites: false });
  const client = new S3Client(server.clientConfig());
  return {
    name: 's3+list',
    store: 's3+list://ci-locks/pipelines',
    env: cliEnv(server.endpoint),
    locks: new LockClient({ store: s3ListStore({ client, bucket: 'ci-locks', prefix: 'pipelines/' }) }),
    // Tokens are the winner's creation time in ms; nothing remembers them after release.
    counterTokens: false,
    async stop() {
      client.destroy();
      await server.stop();
    },
  };
}
