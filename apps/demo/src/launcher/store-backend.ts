import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createLockTable, type DynamoDBLocal, startDynamoDBLocal, startS3Server } from '@latch/testing';
import { LOCAL_CREDENTIALS, type StoreSpec } from '../shared/store-spec.js';
import type { DemoOptions } from './demo-options.js';
import { MemoryStoreHost } from './memory-store-host.js';

export interface StoreBackend {
  spec: StoreSpec;
  /** Set for `--store memory`: the store the replicas reach over IPC. */
  memoryHost: MemoryStoreHost | undefined;
  /** What could not be used, and how to enable it. */
  notices: string[];
  /** Child processes it runs (DynamoDB Local's JVM), for the terminal. */
  processes: Array<{ name: string; pid: number }>;
  stop(): Promise<void>;
}

const LOCAL_BUCKET = 'latch-demo';
const LOCAL_TABLE = 'latch-demo-locks';

/** Starts the local server the chosen store needs (none for memory or real AWS). */
export async function startStoreBackend(options: DemoOptions): Promise<StoreBackend> {
  if (options.store === 'memory') {
    return {
      spec: { kind: 'memory' },
      memoryHost: new MemoryStoreHost(),
      notices: [],
      processes: [],
      stop: async () => {},
    };
  }
  if (options.store === 's3' && options.bucket) {
    const spec: StoreSpec = {
      kind: 's3',
      bucket: options.bucket,
      prefix: options.prefix,
      region: options.region,
    };
    return { spec, memoryHost: undefined, notices: [], processes: [], stop: async () => {} };
  }
  if (options.store === 'dynamodb' && options.table) {
    const spec: StoreSpec = { kind: 'dynamodb', table: options.table, region: options.region };
    return { spec, memoryHost: undefined, notices: [], processes: [], stop: async () => {} };
  }
  if (options.store === 'dynamodb') {
    let dynamo: DynamoDBLocal;
    try {
      dynamo = await startDynamoDBLocal();
    } catch (error) {
      // Most often: no Java. Everything else can still run, on the default store.
      const local = await startLocalS3(options.prefix);
      local.notices.push(
        `Skipped DynamoDB Local: ${(error as Error).message.split('\n')[0]}\n` +
          '  Running on the local S3 server instead. Install a Java runtime (17+) and run again with --store dynamodb.',
      );
      return local;
    }
    return useLocalDynamo(dynamo);
  }
  return startLocalS3(options.prefix);
}

async function startLocalS3(prefix: string): Promise<StoreBackend> {
  const server = await startS3Server({ bucket: LOCAL_BUCKET });
  return {
    spec: { kind: 's3', bucket: LOCAL_BUCKET, prefix, endpoint: server.endpoint, region: server.region },
    memoryHost: undefined,
    notices: [],
    processes: [],
    stop: () => server.stop(),
  };
}

async function useLocalDynamo(dynamo: DynamoDBLocal): Promise<StoreBackend> {
  const client = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: 'us-east-1',
    credentials: LOCAL_CREDENTIALS,
  });
  try {
    await createLockTable(client, { table: LOCAL_TABLE });
  } catch (error) {
    await dynamo.stop();
    throw error;
  } finally {
    client.destroy();
  }
  return {
    spec: { kind: 'dynamodb', table: LOCAL_TABLE, endpoint: dynamo.endpoint, region: 'us-east-1' },
    memoryHost: undefined,
    notices: [],
    processes: [{ name: 'DynamoDB Local', pid: dynamo.pid }],
    stop: () => dynamo.stop(),
  };
}
