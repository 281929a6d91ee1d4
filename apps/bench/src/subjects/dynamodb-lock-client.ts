import AWS from 'aws-sdk';
import DynamoDBLockClient from 'dynamodb-lock-client';
import { type BackendEndpoints, LOCAL_CREDENTIALS, LOCAL_REGION } from '../backend-endpoints.js';
import { RequestTally } from '../counting/request-tally.js';
import { countSdkV2Requests } from '../counting/sdk-v2.js';
import { type HeldLock, type LockSubject, untilAborted } from './lock-subject.js';

/** The lock object dynamodb-lock-client hands back (an EventEmitter). */
interface PeerLock {
  release(callback: (error?: Error) => void): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * dynamodb-lock-client's FailOpen client (the one with heartbeats and fencing tokens) with
 * the lease and heartbeat of its README example, on aws-sdk v2 as it requires.
 */
export function openDynamodbLockClient(
  backends: BackendEndpoints,
  options: { trustLocalTime: boolean },
): LockSubject {
  if (!backends.dynamodb) throw new Error('The dynamodb-lock-client subject needs DynamoDB Local.');
  const requests = new RequestTally();
  const service = new AWS.DynamoDB({
    endpoint: backends.dynamodb.endpoint,
    region: LOCAL_REGION,
    credentials: new AWS.Credentials(LOCAL_CREDENTIALS),
  });
  const documentClient = new AWS.DynamoDB.DocumentClient({ service });
  // The document client sends through its own copy of the service it was given: count there.
  countSdkV2Requests((documentClient as unknown as { service: object }).service, requests);
  const client = new DynamoDBLockClient.FailOpen({
    dynamodb: documentClient,
    lockTable: backends.dynamodb.tables.dynamodbLockClient,
    partitionKey: 'id',
    leaseDurationMs: 10_000,
    heartbeatPeriodMs: 3_000,
    trustLocalTime: options.trustLocalTime,
  });

  const attempt = (key: string) =>
    new Promise<PeerLock>((resolve, reject) => {
      client.acquireLock(key, (error: (Error & { code?: string }) | undefined, lock: PeerLock) =>
        error ? reject(error) : resolve(lock),
      );
    });
  const release = (lock: PeerLock) =>
    new Promise<void>((resolve, reject) => lock.release((error) => (error ? reject(error) : resolve())));

  return {
    requests,
    async acquire(key, signal): Promise<HeldLock> {
      for (;;) {
        signal.throwIfAborted();
        try {
          const lock = await untilAborted(attempt(key), signal, release);
          lock.on('error', () => undefined); // a failed heartbeat; the scenarios only count requests
          return { release: () => release(lock) };
        } catch (error) {
          // It gives up after retryCount (1) refused tries; waiting means asking again.
          if ((error as { code?: string }).code !== 'FailedToAcquireLock') throw error;
        }
      }
    },
    close: async () => undefined,
  };
}
