// A handler module with both AWS SDK clients and OpenTelemetry: telemetry first, then the
// LockClients at module scope, made once per execution environment and reused by every
// invocation it serves.
import './telemetry.js';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { dynamoStore, LockClient, s3Store } from '@latch/core';
import { lockedHandler } from './locked-handler.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const locks = {
  dynamodb: new LockClient({
    store: dynamoStore({
      client: new DynamoDBClient({ endpoint: env('DYNAMODB_ENDPOINT') }),
      table: env('LOCK_TABLE'),
    }),
    pollMs: 200, // the test's invocations hold for a moment: no need to wait a second between looks
  }),
  s3: new LockClient({
    store: s3Store({
      client: new S3Client({ endpoint: env('S3_ENDPOINT'), forcePathStyle: true }),
      bucket: env('LOCK_BUCKET'),
      prefix: env('LOCK_PREFIX'),
    }),
    pollMs: 200,
  }),
};

export const handler = lockedHandler(locks);
