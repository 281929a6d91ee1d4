import { createServer, type Server } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../src/free-port.js';
import { type RedisServer, startRedis } from '../src/redis.js';
import { isAlive, refusesConnections } from './support/processes.js';

describe('startRedis', () => {
  let redis: RedisServer;
  let client: Redis;

  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis(redis.url, { maxRetriesPerRequest: 0 });
  });

  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  it('serves on a loopback redis:// URL', () => {
    expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}`);
    expect(isAlive(redis.pid)).toBe(true);
  });

  it('answers SET/GET from a real client', async () => {
    expect(await client.set('lock:a', 'owner-1', 'PX', 10_000, 'NX')).toBe('OK');
    expect(await client.set('lock:a', 'owner-2', 'PX', 10_000, 'NX')).toBeNull();
    expect(await client.get('lock:a')).toBe('owner-1');
  });

  it('runs without persistence', async () => {
    expect(await client.config('GET', 'save')).toEqual(['save', '']);
    expect(await client.config('GET', 'appendonly')).toEqual(['appendonly', 'no']);
  });

  // Runs last in this block: it stops the shared instance.
  it('stop() ends the server and the port refuses connections', async () => {
    client.disconnect();
    await redis.stop();
    await redis.stop();
    expect(isAlive(redis.pid)).toBe(false);
    expect(await refusesConnections(redis.port)).toBe(true);
  });
});

describe('startRedis options and errors', () => {
  let blocker: Server | undefined;
  afterAll(() => blocker?.close());

  it('listens on a requested port', async () => {
    const port = await findFreePort();
    const redis = await startRedis({ port });
    try {
      expect(redis.url).toBe(`redis://127.0.0.1:${port}`);
      const client = new Redis(port, '127.0.0.1');
      expect(await client.ping()).toBe('PONG');
      client.disconnect();
    } finally {
      await redis.stop();
    }
  });

  it('reports a requested port that is taken, with the server output', async () => {
    blocker = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => blocker!.once('listening', resolve));
    const port = (blocker.address() as { port: number }).port;
    const error = await startRedis({ port }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/redis-server exited with code 1 before answering on port \d+/);
    expect((error as Error).message).toMatch(/Address already in use/);
  });

  it('says redis-server is missing, and how to install it', async () => {
    const error = await startRedis({ redisServerPath: '/nonexistent/redis-server' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/cannot run "\/nonexistent\/redis-server" \(not found\)/);
    expect((error as Error).message).toContain('apt-get install -y redis-server');
  });
});
