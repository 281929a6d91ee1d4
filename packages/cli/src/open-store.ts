import type { LockClientOptions } from '@latch/core';
import { dynamoStore, memoryStore, s3ListStore, s3Store } from '@latch/core';
import { s3PathStyle } from './aws-settings.js';
import type { CliContext } from './cli-context.js';
import type { StoreUrl } from './store-url.js';

/** A firewalled endpoint should fail with a clear message, not hang the pipeline. */
const CONNECT_TIMEOUT_MS = 10_000;

/** A store and the SDK client behind it, which must be closed so the process can exit. */
export interface OpenedStore {
  store: LockClientOptions['store'];
  /** Destroys the SDK client; call it after the LockClient on this store was closed. */
  close(): void;
}

/**
 * Builds the store named by `--store`, with an AWS SDK client configured from the environment.
 * The SDK is loaded only for the store that needs it: help and usage errors stay instant.
 * Records the store in `ctx`, so that a failure is described in terms of its URL.
 */
export async function openStore(url: StoreUrl, ctx: Pick<CliContext, 'env' | 'store'>): Promise<OpenedStore> {
  ctx.store = url;
  const { env } = ctx;
  const requestHandler = { connectionTimeout: CONNECT_TIMEOUT_MS };
  switch (url.kind) {
    case 'memory':
      return { store: memoryStore(), close() {} };
    case 's3':
    case 's3+list': {
      const { S3Client } = await import('@aws-sdk/client-s3');
      const client = new S3Client({ forcePathStyle: s3PathStyle(env), requestHandler });
      const options = { client, bucket: url.bucket, prefix: url.prefix };
      return {
        store: url.kind === 's3' ? s3Store(options) : s3ListStore(options),
        close: () => client.destroy(),
      };
    }
    case 'dynamodb': {
      const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
      const client = new DynamoDBClient({ requestHandler });
      return { store: dynamoStore({ client, table: url.table }), close: () => client.destroy() };
    }
  }
}
