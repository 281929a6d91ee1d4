// A handler module in an app that installed only @aws-sdk/client-dynamodb (as core's README's
// install lines suggest) and no OpenTelemetry. Its 's3' client is an S3 store with a stand-in
// client: the S3 SDK is not installed, so its first request must fail with the LockConfigError
// that names the package to install, bundle or not.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoStore, LockClient, s3Store } from '@latch/core';
import { lockedHandler } from './locked-handler.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const noS3Client = {
  send: async () => {
    throw new Error('the S3 SDK must be missing before any request is sent');
  },
} as unknown as Parameters<typeof s3Store>[0]['client'];

const locks = {
  dynamodb: new LockClient({
    store: dynamoStore({
      client: new DynamoDBClient({ endpoint: env('DYNAMODB_ENDPOINT') }),
      table: env('LOCK_TABLE'),
    }),
    pollMs: 200,
  }),
  s3: new LockClient({ store: s3Store({ client: noS3Client, bucket: env('LOCK_BUCKET') }) }),
};

export const handler = lockedHandler(locks);
