import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startRedis, startS3Server } from '@latch/testing';
import AWS from 'aws-sdk';
import { Redis } from 'ioredis';
import { describe, expect, test } from 'vitest';
import { countRedisCommands } from '../src/counting/redis.js';
import { countsBetween, RequestTally } from '../src/counting/request-tally.js';
import { countSdkV2Requests } from '../src/counting/sdk-v2.js';
import { countSdkV3Requests } from '../src/counting/sdk-v3.js';

describe('request counting against real local servers', () => {
  test('SDK v3: every HTTP attempt is counted, retries included', async () => {
    await using s3 = await startS3Server({ bucket: 'locks' });
    const client = new S3Client(s3.clientConfig());
    const tally = new RequestTally();
    countSdkV3Requests(client, tally);
    s3.faults.slowDown({ op: 'PutObject', times: 1 }); // the SDK retries the 503 by itself
    await client.send(new PutObjectCommand({ Bucket: 'locks', Key: 'a', Body: 'x' }));
    await client.send(new PutObjectCommand({ Bucket: 'locks', Key: 'b', Body: 'x', IfNoneMatch: '*' }));
    client.destroy();
    expect(tally.snapshot()).toEqual({ total: 3, byOp: { PutObject: 3 } });
    expect(s3.requestLog.filter((entry) => entry.op === 'PutObject')).toHaveLength(3);
  });

  test('SDK v2: every HTTP attempt is counted, retries included', async () => {
    await using s3 = await startS3Server({ bucket: 'locks' });
    const service = new AWS.S3({
      endpoint: s3.endpoint,
      s3ForcePathStyle: true,
      region: 'us-east-1',
      credentials: new AWS.Credentials({ accessKeyId: 'x', secretAccessKey: 'y' }),
      retryDelayOptions: { base: 5 },
    });
    const tally = new RequestTally();
    countSdkV2Requests(service, tally);
    s3.faults.slowDown({ op: 'GetObject', times: 1 });
    await service.putObject({ Bucket: 'locks', Key: 'a', Body: 'x' }).promise();
    await service.getObject({ Bucket: 'locks', Key: 'a' }).promise();
    expect(tally.snapshot()).toEqual({ total: 3, byOp: { PutObject: 1, GetObject: 2 } });
  });

  test('ioredis: every command sent is counted by name', async () => {
    const redis = await startRedis();
    const client = new Redis(redis.url);
    try {
      const tally = new RequestTally();
      countRedisCommands(client, tally);
      await client.ping();
      const before = tally.snapshot();
      await client.set('lock:a', 'me', 'PX', 1000, 'NX');
      await client.get('lock:a');
      await client.get('lock:a');
      expect(countsBetween(before, tally.snapshot())).toEqual({ total: 3, byOp: { set: 1, get: 2 } });
    } finally {
      client.disconnect();
      await redis.stop();
    }
  });
});
