import type { Contender, LeaseEngine } from '../engine/lease-engine.js';
import { LockStoreError } from '../shared/errors.js';
import type { LockEventReport } from '../shared/lock-events.js';
import { backoffMs } from '../shared/retry.js';
import { sleep } from '../shared/sleep.js';

/** What settling an abandoned claim uses of its client. */
export interface AbandonedClaims {
  readonly engine: LeaseEngine;
  /** True once the client is closing: retries are then bounded. */
  isClosing(): boolean;
  report(event: LockEventReport): void;
  /** Keeps `work` among what the client's close() waits for. */
  track<R>(work: Promise<R>): Promise<R>;
}

/**
 * Makes sure an acquisition nobody waits for (its caller gave up, or its lease came too late
 * to trust) does not keep `key`, should its claim have landed or land later: in the background,
 * once `when` resolves true, retried while the store fails (a bounded number of times once the
 * client is closing), and reported as 'unsettled' when it cannot be done.
 */
export function settleAbandonedClaim(
  client: AbandonedClaims,
  key: string,
  contender: Contender,
  when?: Promise<boolean>,
): void {
  const { engine } = client;
  const settle = engine.settleAbandoned?.bind(engine);
  if (!settle || contender.abandoned) return;
  contender.abandoned = true;
  contender.unsure = false;
  const time = engine.clock.time;
  const run = async () => {
    if (when && !(await when)) return;
    for (let attempt = 0, afterClose = 0; ; attempt++) {
      try {
        await settle(key, contender);
        return;
      } catch (error) {
        const retryable = error instanceof LockStoreError && error.retryable;
        if (!retryable || (client.isClosing() && afterClose++ >= engine.retry.attempts)) {
          client.report({ type: 'unsettled', key, error });
          return;
        }
        await sleep(time, backoffMs(engine.retry, Math.min(attempt, 8), time.random));
      }
    }
  };
  void client.track(run());
}
