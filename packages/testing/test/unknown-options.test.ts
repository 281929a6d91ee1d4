import { describe, expect, test } from 'vitest';
import { createLockTable, startDynamoDBLocal } from '../src/dynamodb-local.js';
import { faultProxy } from '../src/fault-proxy.js';
import { startRedis } from '../src/redis.js';
import { startS3Server } from '../src/s3/server.js';

describe('the launchers refuse a misspelled option, naming the closest one, before starting anything', () => {
  test.each<[string, () => Promise<unknown>, string]>([
    [
      'startS3Server()',
      () => startS3Server({ bukcet: 'locks' } as never),
      'startS3Server(): unknown option bukcet; did you mean bucket?',
    ],
    [
      'startS3Server() with a case-only typo',
      () => startS3Server({ conditionalwrites: false } as never),
      'startS3Server(): unknown option conditionalwrites; did you mean conditionalWrites?',
    ],
    [
      'startRedis()',
      // A redis-server that does not exist: had the option been accepted, starting would fail differently.
      () => startRedis({ redisServerPath: '/nonexistent/redis-server', startupTimeoutMS: 100 } as never),
      'startRedis(): unknown option startupTimeoutMS; did you mean startupTimeoutMs?',
    ],
    [
      'startDynamoDBLocal()',
      // A java that does not exist: had the option been accepted, starting would fail differently.
      () => startDynamoDBLocal({ javaPath: '/nonexistent/java', jarDIR: '/nonexistent' } as never),
      'startDynamoDBLocal(): unknown option jarDIR; did you mean jarDir?',
    ],
    [
      'createLockTable()',
      // A client that would answer nothing: had the option been accepted, the call would hang.
      () =>
        createLockTable(
          { send: () => new Promise(() => undefined) } as never,
          {
            table: 'locks',
            partitonKey: 'id',
          } as never,
        ),
      'createLockTable(): unknown option partitonKey; did you mean partitionKey?',
    ],
    [
      'faultProxy()',
      () => faultProxy({ target: '127.0.0.1:1', prot: 0 } as never),
      'faultProxy(): unknown option prot; did you mean port?',
    ],
    [
      'faultProxy() with a far key',
      () => faultProxy({ target: '127.0.0.1:1', latencyMs: 5 } as never),
      'faultProxy(): unknown option latencyMs; the options are target, port, host',
    ],
  ])('%s', async (_what, start, message) => {
    const started = start();
    await expect(started).rejects.toThrow(TypeError);
    await expect(started).rejects.toThrow(message);
  });

  test('known options whose value is undefined are accepted', async () => {
    const server = await startS3Server({ bucket: undefined, port: undefined, region: undefined });
    await server.stop();
  });
});
