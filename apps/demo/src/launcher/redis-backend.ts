import { type RedisServer, startRedis } from '@latch/testing';

export type RedisBackend =
  | { server: RedisServer; notice?: undefined }
  | { server?: undefined; notice: string };

/** Starts a throwaway redis-server for the BullMQ queue, or says why the queue is skipped. */
export async function startRedisBackend(): Promise<RedisBackend> {
  try {
    return { server: await startRedis() };
  } catch (error) {
    return {
      notice:
        `Skipped the BullMQ queue "sync-customer": ${(error as Error).message.split('\n')[0]}\n` +
        '  Everything else runs. To enable it, install redis-server and start the demo again.',
    };
  }
}
