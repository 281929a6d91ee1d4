import type { TimerName } from '../../protocol/writer-events.js';
import type { ScheduledTimer, Scheduler } from '../../shared/scheduler.js';

/** The longest delay a Node timer holds (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * A writer's timers, at most one of each name, due at instants of its monotonic clock: the
 * machine arms them (`arm` actions), and each tells `fire` when it falls due.
 */
export class WriterTimers {
  readonly #timers = new Map<TimerName, ScheduledTimer>();
  /** When each armed timer fires (monotonic). */
  readonly #armedAt = new Map<TimerName, number>();

  constructor(
    private readonly time: Scheduler,
    private readonly fire: (timer: TimerName) => void,
  ) {}

  /** Arms `timer` for `at` (monotonic), replacing the one armed before. */
  arm(timer: TimerName, at: number, now: number): void {
    const armedAt = this.#armedAt.get(timer);
    // A renewal already due sooner is not put off: events in a row (local passes every
    // millisecond) would otherwise keep pushing it to the retry time, and it would never run.
    if (timer === 'renew' && armedAt !== undefined && armedAt <= at && armedAt > now) return;
    this.cancel(timer);
    // Never due (a fail-closed lease's deadline): no timer (Node would fire it at once).
    if (!Number.isFinite(at)) return;
    // Beyond what a Node timer holds: it fires at the limit, and the machine arms it again.
    const ms = Math.min(Math.max(0, at - now), MAX_TIMER_MS);
    this.#armedAt.set(timer, at);
    this.#timers.set(
      timer,
      this.time.setTimer(() => {
        this.#armedAt.delete(timer);
        this.#timers.delete(timer);
        this.fire(timer);
      }, ms),
    );
  }

  cancel(timer: TimerName): void {
    this.#timers.get(timer)?.cancel();
    this.#timers.delete(timer);
    this.#armedAt.delete(timer);
  }

  cancelAll(): void {
    for (const timer of this.#timers.values()) timer.cancel();
    this.#timers.clear();
    this.#armedAt.clear();
  }
}
