import type { Scheduler } from '../shared/scheduler.js';

/**
 * Keeps the process alive until `work` settles. Background retries never keep a process alive
 * on their own (a held lock must not stop a process from exiting), but once close() is awaited
 * they are what it waits for: a script whose last line is `await locks.close()` must not exit
 * (or, as an ES module, fail with an unsettled top-level await) while a release is still retried.
 */
export function keepingProcessAlive<T>(time: Scheduler, work: Promise<T>): Promise<T> {
  let timer = arm();
  function arm() {
    // Re-armed rather than one long timer: a simulated clock never has to jump far ahead.
    return time.setTimer(
      () => {
        timer = arm();
      },
      KEEP_ALIVE_TICK_MS,
      { keepAlive: true },
    );
  }
  const stop = () => timer.cancel();
  work.then(stop, stop);
  return work;
}

const KEEP_ALIVE_TICK_MS = 1_000;
