import { Redis } from 'ioredis';
import Redlock, { ExecutionError } from 'redlock';
import type { BackendEndpoints } from '../backend-endpoints.js';
import { countRedisCommands } from '../counting/redis.js';
import { RequestTally } from '../counting/request-tally.js';
import { type HeldLock, type LockSubject, untilAborted } from './lock-subject.js';

/** Lock duration; `using` extends it shortly before it runs out, so held locks renew. */
const DURATION_MS = 30_000;

/** redlock with its default settings on one redis-server, through `using` (auto-extension). */
export function openRedlock(backends: BackendEndpoints): LockSubject {
  if (!backends.redis) throw new Error('The redlock subject needs redis-server.');
  const requests = new RequestTally();
  const redis = new Redis(backends.redis.url);
  countRedisCommands(redis, requests);
  const redlock = new Redlock([redis]);
  // redlock emits every refused attempt as an 'error' event; unhandled, that would crash.
  redlock.on('error', () => undefined);

  /** Holds `key` inside `using` until release() ends the routine. */
  const attempt = (key: string) =>
    new Promise<HeldLock>((resolveHeld, rejectHeld) => {
      let endRoutine!: () => void;
      const routineEnded = new Promise<void>((resolve) => {
        endRoutine = resolve;
      });
      const finished = redlock.using([key], DURATION_MS, async () => {
        resolveHeld({
          release: async () => {
            endRoutine();
            await finished;
          },
        });
        await routineEnded;
      });
      finished.catch(rejectHeld); // before the routine ran: acquisition failed
    });

  return {
    requests,
    async acquire(key, signal) {
      for (;;) {
        signal.throwIfAborted();
        try {
          return await untilAborted(attempt(key), signal, (late) => late.release());
        } catch (error) {
          // retryCount (10) refused tries in a row; waiting means asking again.
          if (!(error instanceof ExecutionError)) throw error;
        }
      }
    },
    close: async () => {
      redis.disconnect();
    },
  };
}
