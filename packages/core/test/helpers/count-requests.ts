import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';

export interface RequestCounter {
  /** HTTP requests sent since the counter was attached (or last reset), retries included. */
  readonly count: number;
  /** The same, per command name ('PutObjectCommand', 'UpdateItemCommand', ...). */
  readonly byCommand: Map<string, number>;
  reset(): void;
}

type AnyMiddlewareStack = {
  add(
    middleware: (
      next: (args: unknown) => Promise<unknown>,
      context: { commandName?: string },
    ) => (args: unknown) => Promise<unknown>,
    options: { step: 'deserialize'; name: string; priority: 'low' },
  ): void;
};

/**
 * Counts the HTTP requests an SDK v3 client really sends. The retry middleware sits in the
 * finalizeRequest step and calls everything after it once per attempt, so a middleware in
 * the last step (deserialize) runs once per HTTP attempt, and only for requests that got as
 * far as being signed and sent. Attach it once per client.
 */
export function countRequests(client: S3Client | DynamoDBClient): RequestCounter {
  let count = 0;
  const byCommand = new Map<string, number>();
  (client.middlewareStack as unknown as AnyMiddlewareStack).add(
    (next, context) => async (args) => {
      const name = context.commandName ?? 'unknown';
      count++;
      byCommand.set(name, (byCommand.get(name) ?? 0) + 1);
      return next(args);
    },
    { step: 'deserialize', name: 'latchTestRequestCounter', priority: 'low' },
  );
  return {
    get count() {
      return count;
    },
    byCommand,
    reset() {
      count = 0;
      byCommand.clear();
    },
  };
}
