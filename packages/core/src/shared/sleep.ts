import type { Scheduler } from './scheduler.js';

/**
 * Sleeps `ms` on `scheduler`, or until `signal` aborts (then rejects with the signal's reason).
 * Waits that a caller awaits keep the process alive (`keepAlive: true`); background work never does.
 */
export function sleep(
  scheduler: Scheduler,
  ms: number,
  signal?: AbortSignal,
  options: { keepAlive?: boolean } = {},
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      timer.cancel();
      reject(signal?.reason);
    };
    const timer = scheduler.setTimer(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      ms,
      options,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
