// Reads locks with the app's own (unbundled) @latch/core, after the invocations: prints
// `STATES {"<store>:<key>": "free" | "held" | "expired", ...}`.
//   node inspect.mjs '<JSON array of [store, key]>'
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { dynamoStore, LockClient, s3Store } from '@latch/core';

const env = process.env;
const dynamodb = new DynamoDBClient({ endpoint: env.DYNAMODB_ENDPOINT });
const s3 = new S3Client({ endpoint: env.S3_ENDPOINT, forcePathStyle: true });
const clients = {
  dynamodb: new LockClient({ store: dynamoStore({ client: dynamodb, table: env.LOCK_TABLE }) }),
  s3: new LockClient({ store: s3Store({ client: s3, bucket: env.LOCK_BUCKET, prefix: env.LOCK_PREFIX }) }),
};
const states = {};
for (const [store, key] of JSON.parse(process.argv[2])) {
  states[`${store}:${key}`] = (await clients[store].inspect(key)).state;
}
console.log(`STATES ${JSON.stringify(states)}`);
await Promise.all(Object.values(clients).map((client) => client.close()));
dynamodb.destroy();
s3.destroy();
