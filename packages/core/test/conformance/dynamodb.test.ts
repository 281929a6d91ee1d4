import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { faultProxy, startDynamoDBLocal } from '@latch/testing';
import { describeLockConformance } from '@latch/testing/conformance';
import * as latch from '../../src/index.js';
import { dynamoStore, ensureLockTable } from '../../src/index.js';

/** Items a Scan reads per page in this suite (DynamoDB's own page ends at 1 MB). */
const SCAN_PAGE_ITEMS = 100;

describeLockConformance({
  latch,
  name: 'the DynamoDB store (DynamoDB Local)',
  start: async () => {
    const ddb = await startDynamoDBLocal();
    // Clients talk through a TCP proxy so a test can cut the connection like a real network fault.
    const proxy = await faultProxy({ target: ddb.endpoint });
    const client = new DynamoDBClient({
      endpoint: proxy.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
    });
    await ensureLockTable(client, { table: 'locks' });
    const store = dynamoStore({ client, table: 'locks' });
    const scans = forceScanPages(client, SCAN_PAGE_ITEMS);
    return {
      store: () => store,
      listRequests: () => scans.count,
      breakWrites: () => {
        proxy.reset();
        proxy.resetNext(1_000_000);
        return () => proxy.clear();
      },
      corrupt: async (key) => {
        await client.send(
          new PutItemCommand({
            TableName: 'locks',
            Item: { pk: { S: key }, latch: { N: '1' }, token: { S: 'seven' } },
          }),
        );
      },
      stop: async () => {
        client.destroy();
        await proxy.close();
        await ddb.stop();
      },
    };
  },
  // Pages of SCAN_PAGE_ITEMS items read: a listing of 250 locks takes at least three.
  listPagingLocks: 250,
  limitations: { listOrder: 'a DynamoDB Scan returns items in the order of their partition key hashes' },
});

/**
 * A Scan page ends after 1 MB of items read, which a conformance run never fills: this sets the
 * Scan's `Limit` (items read per page) on every Scan the client sends, and counts them.
 */
function forceScanPages(client: DynamoDBClient, items: number): { readonly count: number } {
  const counter = { count: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'ScanCommand') {
        counter.count++;
        (args.input as { Limit?: number }).Limit = items;
      }
      return next(args);
    },
    { step: 'initialize', name: 'latchConformanceScanPages' },
  );
  return counter;
}
