import type { RequestTally } from './request-tally.js';

/** The part of an AWS SDK v3 client's middleware stack this counter uses. */
interface MiddlewareStackLike {
  add(
    middleware: (
      next: (args: unknown) => Promise<unknown>,
      context: { commandName?: string },
    ) => (args: unknown) => Promise<unknown>,
    options: { step: 'finalizeRequest'; priority: 'low'; name: string },
  ): void;
}

/**
 * Counts every HTTP attempt an AWS SDK v3 client sends, retries included. The SDK's retry
 * middleware sits high in the finalizeRequest step and calls what comes after it once per
 * attempt, so a low-priority middleware in the same step sees each attempt.
 */
export function countSdkV3Requests(client: { middlewareStack: unknown }, tally: RequestTally): void {
  (client.middlewareStack as MiddlewareStackLike).add(
    (next, context) => (args) => {
      tally.add((context.commandName ?? 'Unknown').replace(/Command$/, ''));
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: 'latchBenchRequestCounter' },
  );
}
