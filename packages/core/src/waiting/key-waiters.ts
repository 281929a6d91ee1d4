import type { Lock, LockSettings } from '../client/lock.js';
import type { VersionedRecord } from '../contract/lock-record.js';
import type { Contender } from '../engine/lease-engine.js';
import type { Scheduler } from '../shared/scheduler.js';
import { LocalTurn } from './local-turn.js';

/** One caller of `acquire` waiting for a key. */
export interface Waiter {
  contender: Contender;
  settings: LockSettings;
  resolve(lock: Lock<unknown>): void;
  reject(error: unknown): void;
  settled: boolean;
  /** Set once a 'waiting' event was reported for this caller. */
  reportedWaiting?: boolean;
}

/**
 * Everything one client knows about one key: the local holder, the local waiters (served in
 * order), one poller shared by all of them (so N local waiters cost one poll, not N), and the
 * client's current turn with the key (so other clients get the key too).
 */
export class KeyWaiters {
  readonly waiters: Waiter[] = [];
  holder: Lock<unknown> | null = null;
  polling = false;
  /** Latest record seen by the poller, for timeout messages. */
  lastSeen: VersionedRecord | null | undefined;
  /** The poller's last store failure, cleared by the next answer: the cause of a timeout. */
  lastError: unknown;
  readonly turn: LocalTurn;
  private wakeUp: (() => void) | undefined;

  constructor(
    readonly key: string,
    turn: { turnMs: number; pollMs: number },
    private readonly scheduler: Scheduler,
  ) {
    this.turn = new LocalTurn(turn.turnMs, turn.pollMs, () => scheduler.monotonic());
  }

  /** The first waiter still waiting, dropping those that gave up. */
  head(): Waiter | undefined {
    while (this.waiters.length > 0 && this.waiters[0]!.settled) this.waiters.shift();
    return this.waiters[0];
  }

  remove(waiter: Waiter): void {
    const index = this.waiters.indexOf(waiter);
    if (index >= 0) this.waiters.splice(index, 1);
  }

  get idle(): boolean {
    return this.holder === null && this.head() === undefined && !this.polling;
  }

  /** Sleeps up to `ms`, returning early when `wake()` is called. */
  nap(ms: number): Promise<void> {
    return new Promise((resolve) => {
      // The poller serves waiting callers: its naps keep the process alive, as their waits do.
      const timer = this.scheduler.setTimer(done, ms, { keepAlive: true });
      function done() {
        timer.cancel();
        resolve();
      }
      this.wakeUp = done;
    });
  }

  wake(): void {
    const wakeUp = this.wakeUp;
    this.wakeUp = undefined;
    wakeUp?.();
  }
}
