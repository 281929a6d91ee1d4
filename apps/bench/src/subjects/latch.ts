import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import {
  dynamoStore,
  type LeaseStrategy,
  LockClient,
  type LockStore,
  memoryStore,
  s3ListStore,
  s3Store,
} from '@latch/core';
import { type BackendEndpoints, LOCAL_CREDENTIALS, LOCAL_REGION } from '../backend-endpoints.js';
import { RequestTally } from '../counting/request-tally.js';
import { countSdkV3Requests } from '../counting/sdk-v3.js';
import { countStoreCalls } from '../counting/store.js';
import type { LockSubject } from './lock-subject.js';
import type { SemaphoreClient, SemaphoreClientOptions } from './semaphore-client.js';

type LatchBackend = 'memory' | 's3' | 'dynamodb' | 's3-list';

/** Latch's LockClient with default settings over one of its stores. */
export function openLatch(backend: LatchBackend, backends: BackendEndpoints): LockSubject {
  const requests = new RequestTally();
  const { store, close } = openStore(backend, backends, requests);
  // The memory store lives in this one client's process: nobody else can wait, so no turns.
  const locks = new LockClient(
    backend === 'memory' ? { store, localTurnMs: Number.POSITIVE_INFINITY } : { store },
  );
  return {
    requests,
    async acquire(key, signal) {
      const lock = await locks.acquire(key, { signal });
      return { release: () => lock.release() };
    },
    newSemaphoreClient: (options = {}) => semaphoreClient(store, options),
    close: async () => close(),
  };
}

/** `limit` and `acquireAll` of a new LockClient, with its defaults otherwise; counts its renewals. */
function semaphoreClient(store: LockStore | LeaseStrategy, options: SemaphoreClientOptions): SemaphoreClient {
  let renewals = 0;
  let lost = 0;
  const locks = new LockClient({
    store,
    ...options,
    onEvent: (event) => {
      if (event.type === 'renewed') renewals++;
      else if (event.type === 'lost') lost++;
    },
  });
  return {
    get renewals() {
      return renewals;
    },
    get lost() {
      return lost;
    },
    async acquire(key, limit, signal) {
      const lock = await locks.acquire(key, { signal, limit });
      return { release: () => lock.release() };
    },
    async acquireAll(keys, signal) {
      const set = await locks.acquireAll(keys, { signal });
      return { release: () => set.release() };
    },
  };
}

function openStore(
  backend: LatchBackend,
  backends: BackendEndpoints,
  requests: RequestTally,
): { store: LockStore | LeaseStrategy; close: () => void } {
  switch (backend) {
    case 'memory':
      return { store: countStoreCalls(memoryStore(), requests), close: () => undefined };
    case 's3':
    case 's3-list': {
      const target = backend === 's3' ? backends.s3 : backends.s3Plain;
      if (!target) throw new Error(`The ${backend} subject needs its S3 server.`);
      const client = new S3Client({
        endpoint: target.endpoint,
        forcePathStyle: true,
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
      });
      countSdkV3Requests(client, requests);
      const options = { client, bucket: target.bucket, prefix: 'latch/' };
      // The local servers stand in for AWS, where s3Store's default verify sends no probe.
      const store = backend === 's3' ? s3Store({ ...options, verify: false }) : s3ListStore(options);
      return { store, close: () => client.destroy() };
    }
    case 'dynamodb': {
      if (!backends.dynamodb) throw new Error('The latch-dynamodb subject needs DynamoDB Local.');
      const client = new DynamoDBClient({
        endpoint: backends.dynamodb.endpoint,
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
      });
      countSdkV3Requests(client, requests);
      return {
        // DynamoDB Local stands in for AWS, where the default verify sends no probe.
        store: dynamoStore({ client, table: backends.dynamodb.tables.latch, verify: false }),
        close: () => client.destroy(),
      };
    }
  }
}
