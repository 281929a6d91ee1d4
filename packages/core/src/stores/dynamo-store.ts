import type { DynamoDBClient, ScanCommandOutput } from '@aws-sdk/client-dynamodb';
import type { LockRecord, VersionedRecord } from '../contract/lock-record.js';
import type {
  ClaimOutcome,
  ClaimRequest,
  ListedKey,
  ListPage,
  LockStore,
  WriteCondition,
  WriteOutcome,
} from '../contract/lock-store.js';
import { LockConfigError, LockCorruptedError } from '../shared/errors.js';
import { checkOptionKeys } from '../shared/option-keys.js';
import { checkKeyBytes, describe } from '../shared/validation.js';
import { earlierAttemptMayHaveLanded, trackAttempts } from './aws-attempts.js';
import type { DynamoDBClientLike } from './aws-client.js';
import { classifyAwsError } from './aws-error-kind.js';
import { type AwsOperation, awsOperations, toLockStoreError } from './aws-errors.js';
import { claimExpressions } from './dynamo-claim-expressions.js';
import {
  attributesBytes,
  checkKeyAttributeNames,
  decodeItem,
  formatVersion,
  type Item,
  n,
  parseVersion,
  RECORD_ATTRIBUTES,
  recordAttributes,
  s,
} from './dynamo-item-codec.js';
import { loadDynamoSdk } from './dynamo-sdk.js';
import { recordServerDate } from './server-date.js';
import { checkVerifyOption, verifyScopeOf } from './verify-option.js';

export interface DynamoStoreOptions {
  /** Your DynamoDB client (region, credentials, endpoint are yours to configure). */
  client: DynamoDBClientLike;
  /** An existing table whose partition key (and sort key, if any) is a string. */
  table: string;
  /** Name of the table's partition key attribute (default 'pk'). */
  partitionKey?: string;
  /** Name of the table's sort key attribute, when the table has one. */
  sortKey?: string;
  /** Sort key value of lock items (default 'lock'); only with `sortKey`. */
  sortKeyValue?: string;
  /**
   * Check the table with `verifyStore` before the first lock a LockClient takes on it (once per
   * table and endpoint in a process, 17 requests), and refuse to lock on a store whose conditional
   * writes do not hold. Default 'auto': when the client's endpoint is not AWS's own (a
   * DynamoDB-compatible service, DynamoDB Local), never against AWS DynamoDB.
   */
  verify?: boolean | 'auto';
}

const DYNAMO_STORE_OPTIONS: Record<keyof DynamoStoreOptions, true> = {
  client: true,
  table: true,
  partitionKey: true,
  sortKey: true,
  sortKeyValue: true,
  verify: true,
};
const DYNAMO_STORE_OPTION_KEYS = Object.keys(DYNAMO_STORE_OPTIONS);

/** Largest partition key value DynamoDB accepts, in UTF-8 bytes. */
const PARTITION_KEY_BYTES = 2048;
/**
 * DynamoDB items are at most 400 KB. recordBytes counts every attribute but the partition
 * key value, which this headroom covers (2 KB) with room to spare for rounding.
 */
const MAX_RECORD_BYTES = 390_000;

/** Every attribute as an expression placeholder: `#rv` for rv, and so on. */
/** Expression shapes whose attribute names are kept (a few per store in practice; bounded in case). */
const MAX_CACHED_SHAPES = 64;
const RECORD_NAMES: Record<string, string> = Object.fromEntries(RECORD_ATTRIBUTES.map((a) => [`#${a}`, a]));

/**
 * One item per lock, compared-and-swapped on a record version attribute with condition
 * expressions. Failed conditions return the stored item (ALL_OLD), so a conflict costs no
 * extra read, and `claim` takes a free or expired lock in one UpdateItem.
 */
export function dynamoStore(options: DynamoStoreOptions): LockStore {
  const { client, table, partitionKey, sortKey, sortKeyValue } = checkOptions(options);
  const verify = checkVerifyOption('dynamoStore', options.verify);
  const keyAttributes = (key: string): Item =>
    sortKey === undefined
      ? { [partitionKey]: s(key) }
      : { [partitionKey]: s(key), [sortKey]: s(sortKeyValue!) };
  const keyNames: ReadonlySet<string> = new Set(
    sortKey === undefined ? [partitionKey] : [partitionKey, sortKey],
  );
  const allNames: Record<string, string> = { ...RECORD_NAMES, '#pk': partitionKey };
  if (sortKey !== undefined) allNames['#sk'] = sortKey;
  // DynamoDB rejects unused placeholders, so each request names only the ones it uses. The
  // expressions come in a handful of shapes: each shape's names are worked out once.
  const namesByShape = new Map<string, Readonly<Record<string, string>>>();
  const namesIn = (...expressions: string[]): Record<string, string> => {
    const shape = expressions.join('\n');
    let names = namesByShape.get(shape);
    if (names === undefined) {
      const found: Record<string, string> = {};
      for (const expression of expressions) {
        for (const [placeholder] of expression.matchAll(/#\w+/g)) found[placeholder] = allNames[placeholder]!;
      }
      names = found;
      if (namesByShape.size < MAX_CACHED_SHAPES) namesByShape.set(shape, names);
    }
    return { ...names };
  };
  const createHint = `Create it with a string partition key "${partitionKey}"${
    sortKey === undefined ? '' : ` and a string sort key "${sortKey}"`
  } (ensureLockTable() for local use; CloudFormation, CDK or Terraform in production), or pass the right name as dynamoStore({ table }).`;
  const keySchema = `a string partition key "${partitionKey}" and ${
    sortKey === undefined ? 'no sort key' : `a string sort key "${sortKey}"`
  }`;
  const op = awsOperations('dynamodb', table, createHint, keySchema);

  /** A failed condition carries the stored item (ALL_OLD), or none when there is no item. */
  const conditionFailed = (key: string, error: unknown, operation: AwsOperation) => {
    if (classifyAwsError(error) !== 'conflict') throw toLockStoreError(error, operation);
    const old = (error as { Item?: Item }).Item;
    // A retried request may have failed against our own earlier attempt.
    return {
      ok: false as const,
      current: old ? decodeItem(key, old, keyNames) : null,
      maybeApplied: earlierAttemptMayHaveLanded(error),
    };
  };

  const put = async (key: string, item: Item, condition: string, values?: Item) => {
    const { PutItemCommand } = await loadDynamoSdk();
    await client.send(
      trackAttempts(
        new PutItemCommand({
          TableName: table,
          Item: { ...keyAttributes(key), ...item },
          ConditionExpression: condition,
          ExpressionAttributeNames: namesIn(condition),
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
  };

  return {
    kind: 'dynamodb',
    maxRecordBytes: MAX_RECORD_BYTES,

    checkKey(key) {
      checkKeyBytes(key, PARTITION_KEY_BYTES, 'a DynamoDB partition key');
    },

    recordBytes(record) {
      // The largest possible record version, so the estimate never falls short later.
      const attributes = { ...keyAttributes(''), ...recordAttributes(record, Number.MAX_SAFE_INTEGER) };
      return attributesBytes(attributes);
    },

    verifyScope: () => verifyScopeOf(verify, client, `dynamodb://${table}`),

    async serverTime(key) {
      const { GetItemCommand } = await loadDynamoSdk();
      const { command, date } = recordServerDate(
        new GetItemCommand({
          TableName: table,
          Key: keyAttributes(key),
          ProjectionExpression: '#pk',
          ExpressionAttributeNames: { '#pk': partitionKey },
        }),
      );
      try {
        await client.send(command);
      } catch (error) {
        throw toLockStoreError(error, op('GetItem', key, false));
      }
      return date();
    },

    async read(key): Promise<VersionedRecord | null> {
      const { GetItemCommand } = await loadDynamoSdk();
      let item: Item | undefined;
      try {
        const res = await client.send(
          new GetItemCommand({ TableName: table, Key: keyAttributes(key), ConsistentRead: true }),
        );
        item = res.Item;
      } catch (error) {
        throw toLockStoreError(error, op('GetItem', key, false));
      }
      return item ? decodeItem(key, item, keyNames) : null;
    },

    async write(key, record: LockRecord, condition: WriteCondition): Promise<WriteOutcome> {
      let rv = 1;
      let expression = 'attribute_not_exists(#pk)';
      let values: Item | undefined;
      if (!('absent' in condition)) {
        const expected = parseVersion(condition.version);
        // Not a version this store hands out: no record can match it.
        if (!expected) return { ok: false };
        rv = expected.rv + 1;
        expression = '#rv = :rv AND #writeId = :writeId';
        values = { ':rv': n(expected.rv), ':writeId': s(expected.writeId) };
      }
      try {
        await put(key, recordAttributes(record, rv), expression, values);
      } catch (error) {
        return conditionFailed(key, error, op('PutItem', key, true));
      }
      return { ok: true, version: formatVersion(rv, record.writeId) };
    },

    async delete(key, version): Promise<WriteOutcome> {
      const expected = parseVersion(version);
      if (!expected) return { ok: false };
      const { DeleteItemCommand } = await loadDynamoSdk();
      const expression = '#rv = :rv AND #writeId = :writeId';
      try {
        await client.send(
          trackAttempts(
            new DeleteItemCommand({
              TableName: table,
              Key: keyAttributes(key),
              ConditionExpression: expression,
              ExpressionAttributeNames: namesIn(expression),
              ExpressionAttributeValues: { ':rv': n(expected.rv), ':writeId': s(expected.writeId) },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        );
      } catch (error) {
        return conditionFailed(key, error, op('DeleteItem', key, true));
      }
      return { ok: true, version };
    },

    /**
     * One Scan page (up to 1 MB of items read), filtered to lock items whose key starts with
     * `prefix`: a prefix of partition keys cannot be queried. Items come in no key order.
     */
    async list(prefix, cursor): Promise<ListPage> {
      const { ScanCommand } = await loadDynamoSdk();
      const conditions: string[] = [];
      const values: Item = {};
      if (prefix !== '') {
        conditions.push('begins_with(#pk, :prefix)');
        values[':prefix'] = s(prefix);
      }
      // A table shared with other items: only those with the lock sort key value are locks.
      if (sortKey !== undefined) {
        conditions.push('#sk = :sk');
        values[':sk'] = s(sortKeyValue!);
      }
      const filter = conditions.length > 0 ? conditions.join(' AND ') : undefined;
      let page: ScanCommandOutput;
      try {
        page = await client.send(
          new ScanCommand({
            TableName: table,
            ConsistentRead: true,
            ExclusiveStartKey: cursor === undefined ? undefined : (JSON.parse(cursor) as Item),
            ...(filter && {
              FilterExpression: filter,
              ExpressionAttributeNames: namesIn(filter),
              ExpressionAttributeValues: values,
            }),
          }),
        );
      } catch (error) {
        throw toLockStoreError(error, op('Scan', prefix, false));
      }
      const keys: ListedKey[] = [];
      for (const item of page.Items ?? []) {
        const key = item[partitionKey]?.S;
        if (key === undefined) continue;
        try {
          keys.push({ key, current: decodeItem(key, item, keyNames) });
        } catch (error) {
          if (!(error instanceof LockCorruptedError)) throw error;
          keys.push({ key, error });
        }
      }
      return { keys, cursor: page.LastEvaluatedKey && JSON.stringify(page.LastEvaluatedKey) };
    },

    async claim(key, request: ClaimRequest): Promise<ClaimOutcome> {
      const { update, condition, values } = claimExpressions(request);
      const { UpdateItemCommand } = await loadDynamoSdk();
      let attributes: Item | undefined;
      try {
        const res = await client.send(
          trackAttempts(
            new UpdateItemCommand({
              TableName: table,
              Key: keyAttributes(key),
              UpdateExpression: update,
              ConditionExpression: condition,
              ExpressionAttributeNames: namesIn(update, condition),
              ExpressionAttributeValues: values,
              ReturnValues: 'ALL_NEW',
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        );
        attributes = res.Attributes;
      } catch (error) {
        return conditionFailed(key, error, op('UpdateItem', key, true));
      }
      if (!attributes)
        throw toLockStoreError(new Error('UpdateItem returned no attributes'), op('UpdateItem', key, true));
      const { version, record } = decodeItem(key, attributes, keyNames);
      return { ok: true, version, record };
    },
  };
}

interface ResolvedOptions {
  client: DynamoDBClient;
  table: string;
  partitionKey: string;
  sortKey: string | undefined;
  sortKeyValue: string | undefined;
}

function checkOptions(options: DynamoStoreOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null) {
    throw new LockConfigError(`dynamoStore options must be an object, got ${describe(options)}.`);
  }
  checkOptionKeys('dynamoStore()', options, DYNAMO_STORE_OPTION_KEYS);
  const { table, partitionKey = 'pk', sortKey, sortKeyValue } = options;
  // The SDK's own type inside; the option's type names no SDK package (aws-client.ts).
  const client = options.client as unknown as DynamoDBClient;
  if (typeof (client as { send?: unknown } | undefined)?.send !== 'function') {
    throw new LockConfigError('dynamoStore needs `client`: a DynamoDBClient from @aws-sdk/client-dynamodb.');
  }
  if (typeof table !== 'string' || table.length === 0) {
    throw new LockConfigError(
      `dynamoStore needs \`table\`: the name of an existing table, got ${describe(table)}.`,
    );
  }
  checkKeyAttributeNames('dynamoStore', partitionKey, sortKey);
  if (sortKey === undefined) {
    if (sortKeyValue !== undefined) {
      throw new LockConfigError(
        'dynamoStore `sortKeyValue` needs `sortKey`: the name of the table sort key attribute.',
      );
    }
    return { client, table, partitionKey, sortKey, sortKeyValue };
  }
  const value = sortKeyValue ?? 'lock';
  if (typeof value !== 'string' || value.length === 0 || Buffer.byteLength(value, 'utf8') > 1024) {
    throw new LockConfigError(
      `dynamoStore \`sortKeyValue\` must be a string of 1 to 1024 bytes, got ${describe(value)}.`,
    );
  }
  return { client, table, partitionKey, sortKey, sortKeyValue: value };
}
