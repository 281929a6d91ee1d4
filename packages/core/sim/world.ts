import { EventQueue } from './event-queue.js';
import { Rng } from './rng.js';

/** A handle on a scheduled event; cancelling is harmless after it ran. */
export interface Scheduled {
  cancel(): void;
}

/**
 * The simulated universe: one virtual clock (ms, starting at 0), one queue of events and
 * the seed every random stream derives from. Nothing in a run reads real time; time only
 * moves when the driver pops the next event, so a seed always replays the same run.
 */
export class World {
  /** Virtual time in ms. */
  now = 0;
  readonly queue = new EventQueue();
  /** Events executed so far (driver steps). */
  steps = 0;

  constructor(readonly seed: number) {}

  /** An independent random stream for one concern ('workload', 'net:c1.0', ...). */
  stream(label: string): Rng {
    return new Rng(this.seed, label);
  }

  /** Runs `task` at virtual time `at` (never in the past). */
  at(at: number, task: () => void): Scheduled {
    const event = this.queue.push(Math.max(at, this.now), task);
    return {
      cancel() {
        event.cancelled = true;
      },
    };
  }

  after(ms: number, task: () => void): Scheduled {
    return this.at(this.now + Math.max(0, ms), task);
  }
}

/**
 * Lets every promise chain the last event started settle before the next event runs. Core
 * only ever waits on promises or on scheduler timers (which are world events), so once the
 * microtask queue is empty nothing can happen until the driver runs the next event. Node
 * runs a nextTick callback only after V8 has drained the whole microtask queue, so one tick
 * is enough; it costs a tenth of a macrotask turn, which the driver still takes now and then
 * (`turn`) so that Node reports unhandled rejections and flushes output.
 */
export function settle(turn = false): Promise<void> {
  return new Promise((resolve) => (turn ? setImmediate(resolve) : process.nextTick(resolve)));
}
