import { LockConfigError } from './errors.js';
import { type Scheduler, withSystemDefaults } from './scheduler.js';

/**
 * Time as the lease protocol sees it: the wall clock (shared meaning across machines, but
 * may be wrong) and a monotonic clock (only meaningful inside this process, never jumps).
 */
export interface TimeSource {
  /** Wall clock, ms since epoch. */
  now(): number;
  /** Monotonic ms from an arbitrary origin. */
  monotonic(): number;
}

/**
 * - `trusted`: waiters judge a lease expired by the holder's stored expiry time compared with
 *   their own wall clock (plus `toleranceMs`). Fast takeover; needs clocks within tolerance.
 * - `untrusted`: waiters take over only after watching the record stay unchanged for a full
 *   lease (plus `toleranceMs`) on their own monotonic clock. Wall clocks may be arbitrarily wrong.
 */
export type ClockMode = 'trusted' | 'untrusted';

export interface ClockOptions {
  mode?: ClockMode;
  /** Extra margin a waiter adds before judging a lease expired (default 0 ms; trusted mode assumes synced clocks). */
  toleranceMs?: number;
  /**
   * Clocks to use instead of the system's (tests inject skewed or fake clocks here). It may also
   * bring timers and randomness (a full Scheduler, as the deterministic simulator does); what it
   * leaves out is the system's.
   */
  time?: TimeSource & Partial<Scheduler>;
}

/** Every key of ClockOptions: the compiler fails here when one is added or dropped. */
const CLOCK_OPTIONS: Record<keyof ClockOptions, true> = { mode: true, toleranceMs: true, time: true };
export const CLOCK_OPTION_KEYS: readonly string[] = Object.keys(CLOCK_OPTIONS);

export interface ResolvedClock {
  mode: ClockMode;
  toleranceMs: number;
  /** Every clock reading, timer and random draw of one client comes from here. */
  time: Scheduler;
}

export function resolveClock(option: ClockMode | ClockOptions | undefined): ResolvedClock {
  const options: ClockOptions = typeof option === 'string' ? { mode: option } : (option ?? {});
  const mode = options.mode ?? 'trusted';
  if (mode !== 'trusted' && mode !== 'untrusted') {
    throw new LockConfigError(`clock must be 'trusted' or 'untrusted', got ${JSON.stringify(mode)}.`);
  }
  const toleranceMs = options.toleranceMs ?? 0;
  if (typeof toleranceMs !== 'number' || !Number.isFinite(toleranceMs) || toleranceMs < 0) {
    throw new LockConfigError(`clock.toleranceMs must be a finite number >= 0, got ${String(toleranceMs)}.`);
  }
  const { time } = options;
  if (time !== undefined && (typeof time.now !== 'function' || typeof time.monotonic !== 'function')) {
    throw new LockConfigError('clock.time must have now() and monotonic() functions.');
  }
  return { mode, toleranceMs, time: withSystemDefaults(time ?? {}) };
}
