import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { dynamoStore, type LockStore, s3Store } from '@latch/core';
import { LOCAL_CREDENTIALS, type StoreSpec } from '../shared/store-spec.js';
import { ipcStore } from './ipc-store.js';

/** Builds the replica's LockStore. Without an endpoint the SDK's default AWS credentials apply. */
export function connectStore(spec: StoreSpec): { store: LockStore; close(): void } {
  switch (spec.kind) {
    case 's3': {
      const client = new S3Client(
        spec.endpoint
          ? {
              endpoint: spec.endpoint,
              forcePathStyle: true,
              region: spec.region ?? 'us-east-1',
              credentials: LOCAL_CREDENTIALS,
            }
          : spec.region
            ? { region: spec.region }
            : {},
      );
      return {
        store: s3Store({ client, bucket: spec.bucket, prefix: spec.prefix }),
        close: () => client.destroy(),
      };
    }
    case 'dynamodb': {
      const client = new DynamoDBClient(
        spec.endpoint
          ? { endpoint: spec.endpoint, region: spec.region ?? 'us-east-1', credentials: LOCAL_CREDENTIALS }
          : spec.region
            ? { region: spec.region }
            : {},
      );
      return { store: dynamoStore({ client, table: spec.table }), close: () => client.destroy() };
    }
    case 'memory':
      return { store: ipcStore(), close: () => {} };
  }
}
