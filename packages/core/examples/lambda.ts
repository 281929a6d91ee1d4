import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoStore, LockClient } from '@latch/core';

/** What the handler uses of Lambda's context object (`Context` in @types/aws-lambda). */
interface LambdaContext {
  getRemainingTimeInMillis(): number;
}

// At module scope: made once per execution environment, at its cold start, and reused by
// every invocation it serves. Never closed: Lambda freezes the environment between invocations.
const locks = new LockClient({
  store: dynamoStore({ client: new DynamoDBClient({}), table: process.env.LOCK_TABLE ?? 'locks' }),
});

/** Kept back from the invocation's time, to release the lock and answer. */
const RESERVE_MS = 1_000;
/** The longest the work under the lock takes. */
const WORK_MS = 2_000;

export async function handler(event: { orderId: string }, context: LambdaContext) {
  const budgetMs = context.getRemainingTimeInMillis() - RESERVE_MS;
  if (budgetMs < WORK_MS) throw new Error(`${budgetMs} ms left, the work needs ${WORK_MS} ms`);
  // withLock releases before it returns: the environment is never frozen holding the lock.
  return locks.withLock(
    `orders/${event.orderId}`,
    async (lock) => {
      // The work: give lock.fencingToken to what it writes, stop if lock.signal aborts.
      lock.signal.throwIfAborted();
      return { orderId: event.orderId, fencingToken: lock.fencingToken, leaseEndsAt: lock.expiresAt };
    },
    {
      // Wait only while the work still fits in this invocation; then LockTimeoutError.
      waitMs: budgetMs - WORK_MS,
      // The lease lasts as long as the invocation may: no renewals needed (no timers for a
      // freeze to stop), and the lock of an invocation that timed out ends by itself.
      leaseMs: budgetMs,
      heartbeatMs: false,
    },
  );
}
