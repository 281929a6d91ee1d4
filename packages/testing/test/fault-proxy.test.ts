import { setTimeout as sleep } from 'node:timers/promises';
import {
  DynamoDBClient,
  type DynamoDBClientConfig,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLockTable, type DynamoDBLocal, startDynamoDBLocal } from '../src/dynamodb-local.js';
import { type FaultProxy, faultProxy } from '../src/fault-proxy.js';
import { type RedisServer, startRedis } from '../src/redis.js';

let redis: RedisServer;
let ddb: DynamoDBLocal;
let proxy: FaultProxy;
const cleanups: (() => unknown)[] = [];

beforeAll(async () => {
  [redis, ddb] = await Promise.all([startRedis(), startDynamoDBLocal()]);
});

afterAll(async () => {
  await Promise.all([redis?.stop(), ddb?.stop()]);
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await proxy?.close();
});

/** Polls `read` until it returns `want`, for a few seconds at most; returns what it saw last. */
async function eventually<T>(read: () => Promise<T>, want: T): Promise<T> {
  let seen = await read();
  for (let i = 0; i < 300 && seen !== want; i++) {
    await sleep(10);
    seen = await read();
  }
  return seen;
}

describe('faultProxy basics', () => {
  it('keeps the scheme of a URL target and the host:port form of a plain one', async () => {
    proxy = await faultProxy({ target: redis.url });
    expect(proxy.endpoint).toBe(`redis://127.0.0.1:${proxy.port}`);
    expect(proxy.host).toBe('127.0.0.1');
    const plain = await faultProxy({ target: `127.0.0.1:${redis.port}` });
    cleanups.push(() => plain.close());
    expect(plain.endpoint).toBe(`127.0.0.1:${plain.port}`);
    const http = await faultProxy({ target: ddb.endpoint });
    cleanups.push(() => http.close());
    expect(http.endpoint).toBe(`http://127.0.0.1:${http.port}`);
  });

  it('rejects a target it cannot parse', async () => {
    await expect(faultProxy({ target: 'no-port-here' })).rejects.toThrow(/"host:port" or a URL/);
  });

  it('rejects nonsensical applyLate settings', async () => {
    proxy = await faultProxy({ target: redis.url });
    expect(() => proxy.applyLate({ delayMs: -1 })).toThrow(/delayMs/);
    expect(() => proxy.applyLate({ delayMs: 10, times: 0 })).toThrow(/times/);
  });
});

describe('faultProxy in front of Redis (ioredis)', () => {
  /** A client that surfaces faults instead of hiding them behind reconnects and retries. */
  function client(options: RedisOptions = {}): Redis {
    const c = new Redis(proxy.port, '127.0.0.1', {
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      enableReadyCheck: false,
      disableClientInfo: true, // no CLIENT SETINFO on connect: the first bytes sent are the test's own
      lazyConnect: true,
      ...options,
    });
    c.on('error', () => {}); // errors are asserted on the commands
    cleanups.push(() => c.disconnect());
    return c;
  }
  const direct = () => {
    const c = new Redis(redis.port, '127.0.0.1');
    cleanups.push(() => c.disconnect());
    return c;
  };

  beforeEach(async () => {
    proxy = await faultProxy({ target: redis.url });
  });

  it('forwards traffic and counts it', async () => {
    const c = client();
    await c.connect();
    expect(await c.set('plain', 'v')).toBe('OK');
    expect(await c.get('plain')).toBe('v');
    expect(proxy.stats).toMatchObject({ connections: 1, active: 1 });
    expect(proxy.stats.bytesUp).toBeGreaterThan(0);
    expect(proxy.stats.bytesDown).toBeGreaterThan(0);
  });

  it('adds latency in both directions and keeps the order of pipelined replies', async () => {
    const c = client();
    await c.connect();
    proxy.latency(100);
    const started = Date.now();
    expect(await c.ping()).toBe('PONG');
    expect(Date.now() - started).toBeGreaterThanOrEqual(190); // 100 ms up + 100 ms down
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => c.echo(`m${i}`)));
    expect(replies).toEqual(Array.from({ length: 50 }, (_, i) => `m${i}`));
    expect(proxy.stats.hits.latency).toBeGreaterThanOrEqual(2); // the ping, and the echoes
  });

  it('reset() breaks live connections and the client sees an error', async () => {
    const c = client();
    await c.connect();
    const blocked = c.blpop('never-filled', 5);
    await sleep(100);
    proxy.reset();
    await expect(blocked).rejects.toThrow();
    expect(proxy.stats.active).toBe(0);
    expect(proxy.stats.hits.reset).toBe(1);
    proxy.reset(); // nothing left to reset: no hit
    expect(proxy.stats.hits.reset).toBe(1);
  });

  it('resetNext() resets only the next new connection', async () => {
    proxy.resetNext();
    const first = client();
    await first.connect();
    await expect(first.ping()).rejects.toThrow();
    const second = client();
    await second.connect();
    expect(await second.ping()).toBe('PONG');
    expect(proxy.stats.hits).toMatchObject({ resetNext: 1, reset: 0, latency: 0 });
  });

  it('dropResponses(): the write is applied on the server but the client gets an error', async () => {
    const c = client();
    await c.connect();
    await c.del('dropped');
    proxy.dropResponses(true);
    await expect(c.set('dropped', 'applied')).rejects.toThrow();
    expect(await direct().get('dropped')).toBe('applied');
    expect(proxy.stats.hits.dropResponses).toBe(1);
  });

  it('dropResponses({ afterBytes }) lets that many response bytes through first', async () => {
    const c = client();
    await c.connect();
    proxy.dropResponses({ afterBytes: '+PONG\r\n'.length });
    expect(await c.ping()).toBe('PONG');
    await expect(c.ping()).rejects.toThrow();
  });

  it('blackhole() accepts but never answers; clear() restores service', async () => {
    const old = client({ commandTimeout: 300 });
    await old.connect();
    proxy.blackhole(true);
    await expect(old.ping()).rejects.toThrow(/timed out/i);
    const fresh = client({ commandTimeout: 300 });
    await fresh.connect(); // the TCP handshake succeeds...
    await expect(fresh.ping()).rejects.toThrow(/timed out/i); // ...but nothing ever comes back
    expect(proxy.stats.active).toBe(2);
    expect(proxy.stats.hits.blackhole).toBe(2);

    proxy.clear();
    expect(proxy.stats.active).toBe(0); // connections that lost bytes to the blackhole were reset
    const after = client();
    await after.connect();
    expect(await after.ping()).toBe('PONG');
  });

  it('applyLate(): the client sees its command fail, a read right after sees the old value, the write lands later', async () => {
    const c = client();
    await c.connect();
    await c.set('late', 'old');
    proxy.applyLate({ delayMs: 300, times: 1 });
    await expect(c.set('late', 'new')).rejects.toThrow();
    expect(proxy.stats.hits.applyLate).toBe(1);
    expect(await direct().get('late')).toBe('old');
    expect(proxy.stats.lateForwarded).toBe(0);
    expect(await eventually(() => direct().get('late'), 'new')).toBe('new');
    expect(proxy.stats.lateForwarded).toBe(1);
    // times: 1 — the fault is used up and the next connection is served normally.
    const again = client();
    await again.connect();
    expect(await again.get('late')).toBe('new');
  });

  it('applyLate() takes only the start of a request: a connection waiting for its answer is left alone', async () => {
    const c = client();
    await c.connect();
    const blocked = c.blpop('late-list', 5); // sent before the fault, answered after it is switched on
    await sleep(50);
    proxy.applyLate({ delayMs: 100 });
    await direct().rpush('late-list', 'x');
    expect(await blocked).toEqual(['late-list', 'x']);
    expect(proxy.stats.hits.applyLate).toBe(0);
    proxy.applyLate(false);
    expect(await c.ping()).toBe('PONG');
  });
});

describe('faultProxy in front of DynamoDB Local (AWS SDK)', () => {
  const credentials = { accessKeyId: 'x', secretAccessKey: 'y' };
  function client(endpoint: string, config: DynamoDBClientConfig = {}): DynamoDBClient {
    // One attempt: SDK retries would hide the injected faults.
    const c = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials, maxAttempts: 1, ...config });
    cleanups.push(() => c.destroy());
    return c;
  }
  const getItem = (c: DynamoDBClient, pk: string) =>
    c.send(new GetItemCommand({ TableName: 'proxied', Key: { pk: { S: pk } } }));

  beforeAll(async () => {
    const c = client(ddb.endpoint);
    await createLockTable(c, { table: 'proxied' });
  });

  beforeEach(async () => {
    proxy = await faultProxy({ target: ddb.endpoint });
  });

  it('adds latency', async () => {
    const c = client(proxy.endpoint);
    await c.send(new ListTablesCommand({}));
    proxy.latency(150);
    const started = Date.now();
    await c.send(new ListTablesCommand({}));
    expect(Date.now() - started).toBeGreaterThanOrEqual(280); // 150 ms up + 150 ms down
  });

  it('reset() of an in-flight request surfaces as an SDK error', async () => {
    const c = client(proxy.endpoint);
    proxy.latency(300);
    const pending = getItem(c, 'x');
    await sleep(100);
    proxy.reset();
    await expect(pending).rejects.toThrow();
  });

  it('resetNext() fails the next request only', async () => {
    const c = client(proxy.endpoint);
    proxy.resetNext();
    await expect(c.send(new ListTablesCommand({}))).rejects.toThrow();
    const { TableNames } = await c.send(new ListTablesCommand({}));
    expect(TableNames).toContain('proxied');
  });

  it('dropResponses(): the PutItem is applied but the client gets an error', async () => {
    const c = client(proxy.endpoint);
    proxy.dropResponses(true);
    const put = c.send(
      new PutItemCommand({
        TableName: 'proxied',
        Item: { pk: { S: 'lost-response' } },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    await expect(put).rejects.toThrow();
    const { Item } = await getItem(client(ddb.endpoint), 'lost-response');
    expect(Item).toEqual({ pk: { S: 'lost-response' } });
  });

  it('applyLate(): the PutItem fails for the client, a read right after finds nothing, the item appears later', async () => {
    const c = client(proxy.endpoint);
    await c.send(new ListTablesCommand({})); // a kept-alive connection, as the SDK has in use
    proxy.applyLate({ delayMs: 400, times: 1 });
    const put = c.send(
      new PutItemCommand({
        TableName: 'proxied',
        Item: { pk: { S: 'late-item' } },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    await expect(put).rejects.toThrow();
    const reader = client(ddb.endpoint);
    expect((await getItem(reader, 'late-item')).Item).toBeUndefined();
    expect(await eventually(async () => (await getItem(reader, 'late-item')).Item?.pk?.S, 'late-item')).toBe(
      'late-item',
    );
    expect(proxy.stats.hits.applyLate).toBe(1);
    expect(proxy.stats.lateForwarded).toBe(1);
  });

  it('blackhole() makes requests time out; clear() restores service', async () => {
    const c = client(proxy.endpoint, {
      requestHandler: { requestTimeout: 500, throwOnRequestTimeout: true },
    });
    proxy.blackhole(true);
    await expect(c.send(new ListTablesCommand({}))).rejects.toThrow(/timed? ?out/i);
    proxy.clear();
    const { TableNames } = await c.send(new ListTablesCommand({}));
    expect(TableNames).toContain('proxied');
  });
});
