import type { ScheduledTimer, Scheduler } from '../src/shared/scheduler.js';
import type { Rng } from './rng.js';
import type { Scheduled, World } from './world.js';

/** Wall-clock epoch of virtual time 0 (2026-01-01T00:00:00Z), so records carry realistic times. */
export const EPOCH_MS = 1_767_225_600_000;

/** How one client's clocks relate to virtual time. */
export interface ClockParams {
  /** Wall clock minus true time at virtual 0, in ms. */
  offsetMs: number;
  /** Wall-clock drift in parts per million (wall gains driftPpm µs per ms). */
  driftPpm: number;
  /** Monotonic ms per virtual ms (1 ± 0.005). */
  rate: number;
  /** Monotonic reading at virtual 0 (each process has its own origin). */
  monoOrigin: number;
}

/**
 * One simulated process (a client incarnation): its clocks and its event loop. Everything the
 * process does happens through `at`: timers, network answers, the workload's own steps.
 * - paused (event loop blocked): events due meanwhile run at the pause's end, in due order,
 *   as Node runs expired timers and queued I/O after a long synchronous stretch;
 * - crashed: pending and future events are dropped for ever (a restart is a new process);
 * - suspended (a laptop lid, a VM paused by its host): paused, and its monotonic clock stops
 *   too, while its wall clock moves on; a timer falls due once the monotonic clock has advanced
 *   by its delay, as Node's timers do, so those pending at the wake wait on by the suspend.
 */
export class SimProcess {
  paused = false;
  crashed = false;
  /** Wall-clock jumps applied so far (NTP steps, VM migrations), in ms. */
  jumpMs = 0;
  /** Monotonic time lost to suspends so far (virtual ms the monotonic clock stood still). */
  private suspendedTotal = 0;
  private suspendedSince: number | undefined;
  private backlog: Array<() => void> = [];
  private pausedTotal = 0;
  /** Each pause that ended (suspends included), as [start, end] in virtual ms, oldest first. */
  private readonly pauses: Array<[number, number]> = [];
  private pausedSince = 0;
  private ids = 0;
  readonly scheduler: Scheduler;

  constructor(
    readonly world: World,
    /** 'c2.1': client slot 2, incarnation 1. */
    readonly id: string,
    readonly clock: ClockParams,
    private readonly rng: Rng,
    private readonly onTimerError: (error: unknown) => void,
  ) {
    this.scheduler = {
      now: () => this.wallNow(),
      monotonic: () => this.monotonic(),
      setTimer: (callback, ms) => this.setTimer(callback, ms),
      random: () => this.rng.next(),
      randomId: () => `${this.id}-${String(++this.ids).padStart(6, '0')}`,
    };
  }

  wallNow(): number {
    const t = this.world.now;
    return EPOCH_MS + t + this.clock.offsetMs + (this.clock.driftPpm * t) / 1e6 + this.jumpMs;
  }

  /** This process's wall-clock error against true time, in ms. */
  wallErrorMs(at = this.world.now): number {
    return this.clock.offsetMs + (this.clock.driftPpm * at) / 1e6 + this.jumpMs;
  }

  monotonic(): number {
    const stopped =
      this.suspendedTotal + (this.suspendedSince === undefined ? 0 : this.world.now - this.suspendedSince);
    return this.clock.monoOrigin + (this.world.now - stopped) * this.clock.rate;
  }

  /** Runs `task` at virtual time `at` in this process (deferred while paused, dropped once crashed). */
  at(at: number, task: () => void): Scheduled {
    return this.world.at(at, () => this.runOrDefer(task));
  }

  after(ms: number, task: () => void): Scheduled {
    return this.at(this.world.now + Math.max(0, ms), task);
  }

  /** Total virtual ms this process spent paused up to now. */
  pausedMs(): number {
    return this.pausedTotal + (this.paused ? this.world.now - this.pausedSince : 0);
  }

  /** Virtual ms this process spent paused from `since` (a past instant) up to now. */
  pausedMsSince(since: number): number {
    let total = this.paused ? this.world.now - Math.max(since, this.pausedSince) : 0;
    for (let i = this.pauses.length - 1; i >= 0 && this.pauses[i]![1] > since; i--) {
      total += this.pauses[i]![1] - Math.max(since, this.pauses[i]![0]);
    }
    return total;
  }

  pause(): void {
    if (this.paused || this.crashed) return;
    this.paused = true;
    this.pausedSince = this.world.now;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.pausedTotal += this.world.now - this.pausedSince;
    this.pauses.push([this.pausedSince, this.world.now]);
    const due = this.backlog;
    this.backlog = [];
    // Same virtual instant, increasing sequence: they run in the order they fell due.
    for (const task of due) this.world.at(this.world.now, () => this.runOrDefer(task));
  }

  /** A machine suspend: paused, with the monotonic clock stopped until `wake()`. */
  suspend(): void {
    if (this.paused || this.crashed) return;
    this.pause();
    this.suspendedSince = this.world.now;
  }

  get suspended(): boolean {
    return this.suspendedSince !== undefined;
  }

  wake(): void {
    if (this.suspendedSince === undefined) return;
    this.suspendedTotal += this.world.now - this.suspendedSince;
    this.suspendedSince = undefined;
    this.resume();
  }

  crash(): void {
    this.crashed = true;
    this.paused = false;
    this.backlog = [];
  }

  private runOrDefer(task: () => void): void {
    if (this.crashed) return;
    if (this.paused) {
      this.backlog.push(task);
      return;
    }
    task();
  }

  /**
   * Node's setTimeout on this process's monotonic clock: a delay outside [1, 2^31 - 1] becomes
   * 1 ms (as Node does, with a warning), so a core timer armed with Infinity fires at once here too.
   */
  private setTimer(callback: () => void, ms: number): ScheduledTimer {
    const delay = ms >= 1 && ms <= 2_147_483_647 ? ms : 1;
    // The virtual instant at which this process's monotonic clock has advanced by `delay`
    // (nudged up so float rounding never fires a timer early).
    const due = this.world.now + delay / this.clock.rate + 1e-6;
    const target = this.monotonic() + delay;
    let cancelled = false;
    let event: Scheduled;
    const fire = () => {
      if (cancelled) return;
      // A suspend stopped the monotonic clock meanwhile: wait on for the rest of the delay.
      if (this.suspendedTotal > 0 && this.monotonic() < target) {
        event = this.after((target - this.monotonic()) / this.clock.rate + 1e-6, fire);
        return;
      }
      cancelled = true;
      try {
        callback();
      } catch (error) {
        this.onTimerError(error);
      }
    };
    event = this.at(due, fire);
    return {
      cancel() {
        cancelled = true;
        event.cancel(); // harmless once it moved to the pause backlog: the flag stops it there
      },
    };
  }
}
