import { constants } from 'node:os';

/** The signals latch forwards to the command it runs (or that interrupt a wait). */
const TRAPPED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Catches SIGINT/SIGTERM/SIGHUP for the lifetime of a command. Before a child runs, a signal
 * aborts `signal` (cancelling a wait for the lock); once `forwardTo` is set, signals are
 * passed to the child instead and latch keeps running until the child exits.
 */
export class SignalTrap implements Disposable {
  private readonly controller = new AbortController();
  private forward: ((signal: NodeJS.Signals) => void) | undefined;
  /** The first signal received before forwarding started. */
  received: NodeJS.Signals | undefined;

  constructor() {
    for (const name of TRAPPED_SIGNALS) process.on(name, this.onSignal);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  forwardTo(forward: (signal: NodeJS.Signals) => void): void {
    this.forward = forward;
  }

  [Symbol.dispose](): void {
    for (const name of TRAPPED_SIGNALS) process.off(name, this.onSignal);
  }

  private readonly onSignal = (signal: NodeJS.Signals): void => {
    if (this.forward) {
      this.forward(signal);
      return;
    }
    this.received ??= signal;
    this.controller.abort(new Error(`interrupted by ${signal}`));
  };
}

/** The shell convention for a process ended by a signal: 128 + the signal's number. */
export function exitCodeForSignal(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}
