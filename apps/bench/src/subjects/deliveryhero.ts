import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocument } from '@aws-sdk/lib-dynamodb';
import { dynamoDBLockClientFactory, type LockOptions } from '@deliveryhero/dynamodb-lock';
import { type BackendEndpoints, LOCAL_CREDENTIALS, LOCAL_REGION } from '../backend-endpoints.js';
import { RequestTally } from '../counting/request-tally.js';
import { countSdkV3Requests } from '../counting/sdk-v3.js';
import { type HeldLock, type LockSubject, untilAborted } from './lock-subject.js';

const LOCK_GROUP = 'bench';

/** @deliveryhero/dynamodb-lock on the AWS SDK v3 document client, default lease and renewal. */
export function openDeliveryhero(
  backends: BackendEndpoints,
  options: { trustLocalTime: boolean },
): LockSubject {
  if (!backends.dynamodb) throw new Error('The @deliveryhero/dynamodb-lock subject needs DynamoDB Local.');
  const requests = new RequestTally();
  const client = new DynamoDBClient({
    endpoint: backends.dynamodb.endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
  countSdkV3Requests(client, requests);
  const locks = dynamoDBLockClientFactory(DynamoDBDocument.from(client), {
    tableName: backends.dynamodb.tables.deliveryhero,
    partitionKey: 'lockId',
    sortKey: 'lockGroup',
  });
  // Without maxRetryCount it retries until it gets the lock.
  const lockOptions: LockOptions = options.trustLocalTime
    ? { trustLocalTime: true, waitDurationInMs: 50 }
    : {};

  return {
    requests,
    async acquire(key, signal): Promise<HeldLock> {
      const lock = await untilAborted(locks.lock(LOCK_GROUP, key, lockOptions), signal, (late) =>
        locks.releaseLock(late),
      );
      return { release: () => locks.releaseLock(lock) };
    },
    close: async () => {
      await locks.releaseAllLocks().catch(() => undefined);
      client.destroy();
    },
  };
}
