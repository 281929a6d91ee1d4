import type { DynamoDBClient, KeySchemaElement, TableDescription } from '@aws-sdk/client-dynamodb';
import { LockConfigError, LockStoreError } from '../shared/errors.js';
import { checkOptionKeys } from '../shared/option-keys.js';
import { systemScheduler } from '../shared/scheduler.js';
import { sleep } from '../shared/sleep.js';
import { describe } from '../shared/validation.js';
import type { DynamoDBClientLike } from './aws-client.js';
import { classifyAwsError } from './aws-error-kind.js';
import { type AwsOperation, toLockStoreError } from './aws-errors.js';
import { checkKeyAttributeNames } from './dynamo-item-codec.js';
import { loadDynamoSdk } from './dynamo-sdk.js';

export interface EnsureLockTableOptions {
  table: string;
  /** Partition key attribute name (default 'pk'); must match dynamoStore's. */
  partitionKey?: string;
  /** Sort key attribute name, when the table should have one; must match dynamoStore's. */
  sortKey?: string;
  /** Only on-demand capacity is offered: a lock table's traffic is small and bursty. */
  billingMode?: 'PAY_PER_REQUEST';
  /** How long to wait for the table to become ACTIVE (default 60 s). */
  timeoutMs?: number;
}

const ENSURE_LOCK_TABLE_OPTIONS: Record<keyof EnsureLockTableOptions, true> = {
  table: true,
  partitionKey: true,
  sortKey: true,
  billingMode: true,
  timeoutMs: true,
};
const ENSURE_LOCK_TABLE_OPTION_KEYS = Object.keys(ENSURE_LOCK_TABLE_OPTIONS);

const POLL_MS = 250;

/**
 * Creates the lock table if it does not exist (string keys, on-demand) and waits until it
 * is ACTIVE. An existing table must have the expected key schema. Meant for local runs and
 * tests; production tables belong in infrastructure code.
 */
export async function ensureLockTable(
  dynamoClient: DynamoDBClientLike,
  options: EnsureLockTableOptions,
): Promise<void> {
  if (typeof (dynamoClient as { send?: unknown } | undefined)?.send !== 'function') {
    throw new LockConfigError('ensureLockTable needs a DynamoDBClient from @aws-sdk/client-dynamodb.');
  }
  // The SDK's own type inside; the parameter's type names no SDK package (aws-client.ts).
  const client = dynamoClient as unknown as DynamoDBClient;
  checkOptionKeys('ensureLockTable()', options, ENSURE_LOCK_TABLE_OPTION_KEYS);
  const {
    table,
    partitionKey = 'pk',
    sortKey,
    billingMode = 'PAY_PER_REQUEST',
    timeoutMs = 60_000,
  } = options ?? {};
  if (typeof table !== 'string' || table.length === 0) {
    throw new LockConfigError(`ensureLockTable needs \`table\`, got ${describe(table)}.`);
  }
  checkKeyAttributeNames('ensureLockTable', partitionKey, sortKey);
  if (billingMode !== 'PAY_PER_REQUEST') {
    throw new LockConfigError(
      `ensureLockTable supports billingMode 'PAY_PER_REQUEST' only, got ${describe(billingMode)}.`,
    );
  }
  if (!(timeoutMs > 0))
    throw new LockConfigError(`ensureLockTable timeoutMs must be > 0, got ${describe(timeoutMs)}.`);

  const { CreateTableCommand, DescribeTableCommand } = await loadDynamoSdk();
  const keys: KeySchemaElement[] = [{ AttributeName: partitionKey, KeyType: 'HASH' }];
  if (sortKey !== undefined) keys.push({ AttributeName: sortKey, KeyType: 'RANGE' });
  const op = (action: string): AwsOperation => ({
    service: 'dynamodb',
    action,
    write: action !== 'DescribeTable',
    resource: table,
  });

  try {
    await client.send(
      new CreateTableCommand({
        TableName: table,
        AttributeDefinitions: keys.map((k) => ({ AttributeName: k.AttributeName, AttributeType: 'S' })),
        KeySchema: keys,
        BillingMode: billingMode,
      }),
    );
  } catch (error) {
    // ResourceInUseException: the table exists already (or is being created): fine, check it below.
    if ((error as { name?: unknown } | null)?.name !== 'ResourceInUseException') {
      throw toLockStoreError(error, op('CreateTable'));
    }
  }

  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let description: TableDescription | undefined;
    try {
      description = (await client.send(new DescribeTableCommand({ TableName: table }))).Table;
    } catch (error) {
      // Right after CreateTable, some endpoints do not list the table yet.
      if (classifyAwsError(error) !== 'missing-resource') throw toLockStoreError(error, op('DescribeTable'));
    }
    if (description?.TableStatus === 'ACTIVE') {
      checkKeySchema(table, description.KeySchema ?? [], keys);
      return;
    }
    if (Date.now() >= deadline) {
      throw new LockStoreError(
        `DynamoDB table "${table}" did not become ACTIVE within ${timeoutMs} ms (status ${description?.TableStatus ?? 'unknown'}).`,
        { retryable: true, reason: 'unavailable' },
      );
    }
    await sleep(systemScheduler, POLL_MS, undefined, { keepAlive: true });
  }
}

function checkKeySchema(table: string, actual: KeySchemaElement[], expected: KeySchemaElement[]): void {
  const show = (keys: KeySchemaElement[]) => keys.map((k) => `${k.AttributeName} (${k.KeyType})`).join(', ');
  const same =
    actual.length === expected.length &&
    expected.every((e) => actual.some((a) => a.AttributeName === e.AttributeName && a.KeyType === e.KeyType));
  if (!same) {
    throw new LockConfigError(
      `DynamoDB table "${table}" exists with key ${show(actual)}, but the lock store expects ${show(expected)}. Use another table, or set partitionKey/sortKey to match.`,
    );
  }
}
