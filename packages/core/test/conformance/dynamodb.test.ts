import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { faultProxy, startDynamoDBLocal } from '@latch/testing';
import { describeLockConformance } from '@latch/testing/conformance';
import * as latch from '../../src/index.js';
import { dynamoStore, ensureLockTable } from '../../src/index.js';

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
    return {
      store: () => store,
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
});
