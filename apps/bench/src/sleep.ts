import { setTimeout as delay } from 'node:timers/promises';
import { monotonicMs } from './clock.js';

export function sleep(ms: number): Promise<void> {
  return delay(Math.max(0, ms));
}

/** Sleeps until the shared monotonic clock reaches `at`. */
export function sleepUntil(at: number): Promise<void> {
  return sleep(at - monotonicMs());
}
