// The round trips behind `latch-testing check`: each runs against a freshly started backend and
// resolves with a one-line account of what it did, or throws saying what went wrong.
import { callDynamoDB } from './dynamodb-http.js';
import { redisCommands } from './resp-client.js';

export const BACKENDS = ['s3', 'dynamodb', 'redis'] as const;
export type BackendName = (typeof BACKENDS)[number];

/** Where a started backend answers. */
export interface RoundTripTarget {
  endpoint: string;
  port: number;
}

/** One real round trip per backend, proving the conditional write each lock relies on works. */
export const ROUND_TRIPS: Record<BackendName, (running: RoundTripTarget) => Promise<string>> = {
  async s3({ endpoint }) {
    const bucket = `${endpoint}/latch-check`;
    const created = await fetch(bucket, { method: 'PUT' });
    if (created.status !== 200 && created.status !== 409)
      throw new Error(`create bucket: HTTP ${created.status}`);
    const put = () =>
      fetch(`${bucket}/self-check`, { method: 'PUT', headers: { 'if-none-match': '*' }, body: 'held' });
    const first = await put();
    if (first.status !== 200) throw new Error(`first If-None-Match put: HTTP ${first.status}, expected 200`);
    const second = await put();
    if (second.status !== 412)
      throw new Error(`second If-None-Match put: HTTP ${second.status}, expected 412`);
    return 'bucket created; If-None-Match put twice: 200, then 412';
  },
  async dynamodb({ endpoint }) {
    const table = await callDynamoDB(endpoint, 'CreateTable', {
      TableName: 'latch-check',
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
    });
    if (table.status !== 200)
      throw new Error(`CreateTable: HTTP ${table.status} ${JSON.stringify(table.body)}`);
    const put = () =>
      callDynamoDB(endpoint, 'PutItem', {
        TableName: 'latch-check',
        Item: { pk: { S: 'self-check' } },
        ConditionExpression: 'attribute_not_exists(pk)',
      });
    const first = await put();
    if (first.status !== 200)
      throw new Error(`first PutItem: HTTP ${first.status} ${JSON.stringify(first.body)}`);
    const second = await put();
    if (second.status !== 400 || !String(second.body.__type).endsWith('ConditionalCheckFailedException')) {
      throw new Error(
        `second PutItem: HTTP ${second.status} ${JSON.stringify(second.body)}, expected a failed condition`,
      );
    }
    return 'table created; conditional PutItem twice: ok, then ConditionalCheckFailed';
  },
  async redis({ port }) {
    const replies = await redisCommands(port, [
      ['PING'],
      ['SET', 'latch-check', 'a', 'NX', 'PX', '10000'],
      ['SET', 'latch-check', 'b', 'NX', 'PX', '10000'],
      ['GET', 'latch-check'],
    ]);
    const expected = ['PONG', 'OK', null, 'a'];
    if (JSON.stringify(replies) !== JSON.stringify(expected)) {
      throw new Error(
        `PING/SET NX/SET NX/GET replied ${JSON.stringify(replies)}, expected ${JSON.stringify(expected)}`,
      );
    }
    return 'PING; SET NX twice: OK, then refused; GET';
  },
};
