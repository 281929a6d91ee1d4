import type { Redis } from 'ioredis';
import type { RequestTally } from './request-tally.js';

/** Counts every command an ioredis client writes to Redis ('evalsha', 'eval', ...). */
export function countRedisCommands(redis: Redis, tally: RequestTally): void {
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command, stream) => {
    tally.add(command.name);
    return send(command, stream);
  }) as Redis['sendCommand'];
}
