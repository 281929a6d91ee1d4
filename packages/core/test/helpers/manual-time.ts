import type { ScheduledTimer, Scheduler } from '../../src/index.js';

interface Pending {
  at: number;
  seq: number;
  run: () => void;
  cancelled: boolean;
}

/**
 * One simulated timeline for tests: every client's scheduler is a view of it (with its own
 * wall-clock offset), and `advance(ms)` runs due timers in order, letting promises settle
 * between them. Time moves only when a test says so.
 */
export class ManualTime {
  private current = 0;
  private seq = 0;
  private ids = 0;
  private readonly pending: Pending[] = [];

  /** A scheduler on this timeline whose wall clock is `wallOffsetMs` ahead of the others. */
  scheduler(wallOffsetMs = 0): Scheduler {
    return {
      now: () => 1_800_000_000_000 + this.current + wallOffsetMs,
      monotonic: () => this.current,
      setTimer: (run, ms) => this.schedule(run, ms),
      random: () => 0.5,
      randomId: () => `id-${++this.ids}`,
    };
  }

  get elapsed(): number {
    return this.current;
  }

  /** Runs `run` after `ms` of simulated time. */
  schedule(run: () => void, ms: number): ScheduledTimer {
    const timer: Pending = { at: this.current + Math.max(0, ms), seq: this.seq++, run, cancelled: false };
    this.pending.push(timer);
    return { cancel: () => (timer.cancelled = true) };
  }

  /** Moves time forward by `ms`, running every timer that falls due on the way. */
  async advance(ms: number): Promise<void> {
    const end = this.current + ms;
    for (;;) {
      await settle();
      const next = this.nextDue(end);
      if (!next) break;
      this.current = next.at;
      next.run();
    }
    this.current = end;
    await settle();
  }

  /** Advances in small steps until `condition` holds or `limitMs` passed; true when it held. */
  async until(condition: () => boolean, limitMs: number, stepMs = 10): Promise<boolean> {
    for (let waited = 0; waited <= limitMs; waited += stepMs) {
      if (condition()) return true;
      await this.advance(stepMs);
    }
    return condition();
  }

  private nextDue(end: number): Pending | undefined {
    let best = -1;
    for (let i = 0; i < this.pending.length; i++) {
      const timer = this.pending[i]!;
      if (timer.cancelled || timer.at > end) continue;
      const chosen = this.pending[best];
      if (!chosen || timer.at < chosen.at || (timer.at === chosen.at && timer.seq < chosen.seq)) best = i;
    }
    if (best < 0) {
      for (let i = this.pending.length - 1; i >= 0; i--)
        if (this.pending[i]!.cancelled) this.pending.splice(i, 1);
      return undefined;
    }
    return this.pending.splice(best, 1)[0];
  }
}

/** Lets every promise chain started so far run to its next wait on a timer. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}
