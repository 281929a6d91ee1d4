import { randomUUID } from 'node:crypto';

/** A timer a Scheduler started; `cancel()` stops it and is harmless after it fired. */
export interface ScheduledTimer {
  cancel(): void;
}

/**
 * Everything core reads from the outside world that is not the store: the wall clock, the
 * monotonic clock, timers and randomness. Core never calls `Date.now`, `performance.now`,
 * `setTimeout` or `Math.random` itself, so a test (or the deterministic simulator) can run
 * the real client code over simulated time and replay a run from its seed.
 */
export interface Scheduler {
  /** Wall clock, ms since epoch (may be wrong; see the clock modes). */
  now(): number;
  /** Monotonic ms from an arbitrary origin: only meaningful inside this process, never jumps. */
  monotonic(): number;
  /**
   * Calls `callback` after `ms`. Background timers (heartbeats, loss timers) never keep the
   * process alive; `keepAlive: true` is for waits a caller is awaiting.
   */
  setTimer(callback: () => void, ms: number, options?: { keepAlive?: boolean }): ScheduledTimer;
  /** Uniform in [0, 1), for jitter and backoff. */
  random(): number;
  /** A fresh unique id (lock ids, write ids). */
  randomId(): string;
}

/** The system's clocks, timers and randomness: what every client uses unless told otherwise. */
export const systemScheduler: Scheduler = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimer(callback, ms, options) {
    const timer = setTimeout(callback, ms);
    if (!options?.keepAlive) timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
  random: () => Math.random(),
  randomId: () => randomUUID(),
};

/** A scheduler with the given parts replaced, the rest the system's. */
export function withSystemDefaults(parts: Partial<Scheduler>): Scheduler {
  const pick = <K extends keyof Scheduler>(name: K): Scheduler[K] => {
    const own = parts[name];
    return (typeof own === 'function' ? own.bind(parts) : systemScheduler[name]) as Scheduler[K];
  };
  return {
    now: pick('now'),
    monotonic: pick('monotonic'),
    setTimer: pick('setTimer'),
    random: pick('random'),
    randomId: pick('randomId'),
  };
}
