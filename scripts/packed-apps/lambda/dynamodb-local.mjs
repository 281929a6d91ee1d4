// Starts DynamoDB Local through the packed @latch/testing, from the DynamoDB Local folder given
// as the first argument (jarDir), creates the lock table named by the second, prints `READY {"endpoint": ...}`, and
// stops it on SIGTERM.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ensureLockTable } from '@latch/core';
import { startDynamoDBLocal } from '@latch/testing';

const ddb = await startDynamoDBLocal({ jarDir: process.argv[2] });
const client = new DynamoDBClient({ endpoint: ddb.endpoint });
await ensureLockTable(client, { table: process.argv[3] });
client.destroy();
console.log(`READY ${JSON.stringify({ endpoint: ddb.endpoint })}`);
// Nothing else keeps this process alive while it waits for SIGTERM.
const alive = setInterval(() => {}, 60_000);
process.once('SIGTERM', async () => {
  clearInterval(alive);
  await ddb.stop();
  process.exit(0);
});
