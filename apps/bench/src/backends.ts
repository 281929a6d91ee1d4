import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ensureLockTable } from '@latch/core';
import {
  createLockTable,
  type DynamoDBLocal,
  type RedisServer,
  type S3Server,
  startDynamoDBLocal,
  startRedis,
  startS3Server,
} from '@latch/testing';
import {
  type BackendEndpoints,
  type DynamoTables,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
} from './backend-endpoints.js';
import type { SubjectInfo } from './subjects/catalog.js';

const BUCKET = 'bench-locks';
const TABLES: DynamoTables = {
  latch: 'latch-locks',
  dynamodbLockClient: 'dynamodb-lock-client-locks',
  deliveryhero: 'deliveryhero-locks',
};

export interface RunningBackends {
  endpoints: BackendEndpoints;
  stop(): Promise<void>;
}

/**
 * Starts the local backends the given subjects need, and nothing else: the S3 server (in
 * this process), a second one without conditional writes for the S3 list strategy,
 * DynamoDB Local with one table per library, and redis-server.
 */
export async function startBackends(subjects: readonly SubjectInfo[]): Promise<RunningBackends> {
  const needs = new Set(subjects.map((subject) => subject.backend));
  const stops: Array<() => Promise<void>> = [];
  const endpoints: BackendEndpoints = {};
  const stop = async () => {
    await Promise.allSettled(stops.map((stopOne) => stopOne()));
  };
  try {
    if (needs.has('s3')) {
      const s3: S3Server = await startS3Server({ bucket: BUCKET });
      stops.push(() => s3.stop());
      endpoints.s3 = { endpoint: s3.endpoint, bucket: BUCKET };
    }
    if (needs.has('s3-list')) {
      const plain: S3Server = await startS3Server({ bucket: BUCKET, conditionalWrites: false });
      stops.push(() => plain.stop());
      endpoints.s3Plain = { endpoint: plain.endpoint, bucket: BUCKET };
    }
    if (needs.has('dynamodb')) {
      const ddb: DynamoDBLocal = await startDynamoDBLocal();
      stops.push(() => ddb.stop());
      const client = new DynamoDBClient({
        endpoint: ddb.endpoint,
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
      });
      try {
        await ensureLockTable(client, { table: TABLES.latch });
        await createLockTable(client, { table: TABLES.dynamodbLockClient, partitionKey: 'id' });
        await createLockTable(client, {
          table: TABLES.deliveryhero,
          partitionKey: 'lockId',
          sortKey: 'lockGroup',
        });
      } finally {
        client.destroy();
      }
      endpoints.dynamodb = { endpoint: ddb.endpoint, tables: TABLES };
    }
    if (needs.has('redis')) {
      const redis: RedisServer = await startRedis();
      stops.push(() => redis.stop());
      endpoints.redis = { url: redis.url };
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoints, stop };
}
