import { startBackendProcess } from './backend-process.js';
import { checkOptionKeys } from './option-keys.js';
import { redisCommands } from './resp-client.js';

export interface RedisServerOptions {
  /** Port to listen on (127.0.0.1 only). Default: a free port. */
  port?: number;
  /** redis-server executable. Default: `redis-server` from PATH. */
  redisServerPath?: string;
  /** How long to wait for the first PONG. Default: 15 000 ms. */
  startupTimeoutMs?: number;
}

const REDIS_OPTIONS: Record<keyof RedisServerOptions, true> = {
  port: true,
  redisServerPath: true,
  startupTimeoutMs: true,
};
const REDIS_OPTION_KEYS = Object.keys(REDIS_OPTIONS);

export interface RedisServer {
  /** e.g. `redis://127.0.0.1:43117` — pass to ioredis / node-redis. */
  url: string;
  port: number;
  /** PID of the redis-server process. */
  pid: number;
  /** Stops the server (idempotent); nothing is persisted. */
  stop(): Promise<void>;
}

const REDIS_HINT =
  'Install Redis, e.g. `sudo apt-get install -y redis-server` (Debian/Ubuntu) or `brew install redis` ' +
  '(macOS), or pass `redisServerPath` with the path to a redis-server executable.';

/**
 * Starts a throwaway redis-server on 127.0.0.1: no config file, no RDB/AOF persistence, and
 * resolves once it answers PING.
 */
export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  checkOptionKeys('startRedis()', options, REDIS_OPTION_KEYS);
  const backend = await startBackendProcess({
    name: 'redis-server',
    command: options.redisServerPath ?? 'redis-server',
    args: (port) => [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--protected-mode',
      'no',
      '--daemonize',
      'no',
    ],
    port: options.port,
    probe: async (port) => {
      const [reply] = await redisCommands(port, [['PING']], { timeoutMs: 1_000 });
      return reply === 'PONG';
    },
    startupTimeoutMs: options.startupTimeoutMs ?? 15_000,
    missingHint: REDIS_HINT,
    portInUse: /Address already in use/i,
  });
  return {
    url: `redis://127.0.0.1:${backend.port}`,
    port: backend.port,
    pid: backend.pid,
    stop: backend.stop,
  };
}
