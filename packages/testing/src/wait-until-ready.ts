import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitUntilReadyOptions {
  /** One readiness attempt; resolves true when the service answered correctly. Errors count as "not yet". */
  probe: () => Promise<boolean>;
  timeoutMs: number;
  intervalMs?: number;
  /** Resolves with a reason when waiting is pointless, e.g. the process has exited. */
  abandoned?: Promise<string>;
  /** Builds the error thrown on timeout. */
  onTimeout: () => Error;
}

/** Polls `probe` until it succeeds, the deadline passes, or `abandoned` fires — whichever comes first. */
export async function waitUntilReady(options: WaitUntilReadyOptions): Promise<void> {
  const { probe, timeoutMs, intervalMs = 100, onTimeout } = options;
  const deadline = Date.now() + timeoutMs;
  const ABANDONED = Symbol('abandoned');
  let reason = '';
  const abandoned = new Promise<typeof ABANDONED>((resolve) => {
    void options.abandoned?.then((r) => {
      reason = r;
      resolve(ABANDONED);
    });
  });
  while (true) {
    // Racing the probe means an exited process is reported at once, even while a probe hangs on
    // something else that happens to listen on the port.
    const ok = await Promise.race([probe().catch(() => false), abandoned]);
    if (ok === ABANDONED || reason) throw new Error(reason);
    if (ok) return;
    if (Date.now() >= deadline) throw onTimeout();
    if ((await Promise.race([sleep(intervalMs), abandoned])) === ABANDONED) throw new Error(reason);
  }
}
