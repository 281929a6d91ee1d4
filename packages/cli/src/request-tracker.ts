/** The part of an AWS SDK v3 client the tracker hooks into. */
interface MiddlewareClient {
  middlewareStack: {
    add(
      middleware: (next: (args: never) => Promise<unknown>) => (args: never) => Promise<unknown>,
      options: { step: 'initialize'; name: string },
    ): void;
  };
}

/**
 * Counts the SDK requests in flight on a client, so latch can wait for the lock client's
 * last attempt to finish before exiting after a failed acquire. Without that, an attempt
 * still in flight when `--wait` ran out (a claim that just landed, or an s3+list entry not yet
 * withdrawn) would be left behind when the process exits, and hold the lock for a lease.
 *
 * A stopgap until @latch/core offers a way to await its in-flight work (e.g. `locks.close()`).
 */
export class RequestTracker {
  private inFlight = 0;
  private lastActivity = 0;

  track<C>(client: C): C {
    (client as unknown as MiddlewareClient).middlewareStack.add(
      (next) => async (args) => {
        this.inFlight++;
        this.lastActivity = performance.now();
        try {
          return await next(args);
        } finally {
          this.inFlight--;
          this.lastActivity = performance.now();
        }
      },
      { step: 'initialize', name: 'latchRequestTracker' },
    );
    return client;
  }

  /** Resolves once no request has been in flight for `quietMs` (or after `capMs` at most). */
  async quiet(quietMs: number, capMs: number): Promise<void> {
    const started = performance.now();
    while (performance.now() - started < capMs) {
      if (this.inFlight === 0 && performance.now() - this.lastActivity >= quietMs) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
