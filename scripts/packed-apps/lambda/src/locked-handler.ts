// The Lambda handler the packed Lambda apps bundle, done as core's README says: the caller
// makes its LockClients at module scope (with-*.ts); each invocation waits no longer than its
// remaining time allows, holds a lease sized to the invocation, and releases before it returns.
import { setTimeout as sleep } from 'node:timers/promises';
import type { LockClient } from '@latch/core';

/** What the handler uses of Lambda's context object (`Context` in @types/aws-lambda). */
export interface LambdaContext {
  getRemainingTimeInMillis(): number;
}

export interface LockedEvent {
  /** Which of the module's clients to lock with: 'dynamodb' or 's3'. */
  store: string;
  key: string;
  /** How long the work under the lock takes. */
  holdMs: number;
}

export interface LockedResult {
  fencingToken: number;
  /** Wall-clock ms when the work began and ended, both while the lock was held. */
  entered: number;
  left: number;
  /** The lease this invocation held the lock with. */
  leaseMs: number;
  /** Whether the lock was still held when withLock returned (it must not be). */
  heldAfter: boolean;
}

/** Kept back from the invocation's time, to release the lock and answer. */
const RESERVE_MS = 1_000;
/** The longest the work under the lock may take. */
const WORK_MS = 2_000;

export function lockedHandler(locks: Record<string, LockClient>) {
  return async (event: LockedEvent, context: LambdaContext): Promise<LockedResult> => {
    const client = locks[event.store];
    if (!client) throw new Error(`no lock client for store ${event.store}`);
    const budgetMs = context.getRemainingTimeInMillis() - RESERVE_MS;
    if (budgetMs < WORK_MS) throw new Error(`${budgetMs} ms left, the work needs ${WORK_MS} ms`);
    let lock: Parameters<Parameters<LockClient['withLock']>[1]>[0] | undefined;
    const result = await client.withLock(
      event.key,
      async (held) => {
        lock = held;
        const entered = Date.now();
        await sleep(event.holdMs, undefined, { signal: held.signal });
        const left = Date.now();
        const leaseMs = held.expiresAt === null ? Number.POSITIVE_INFINITY : held.expiresAt - held.acquiredAt;
        return { fencingToken: held.fencingToken, entered, left, leaseMs };
      },
      { waitMs: budgetMs - WORK_MS, leaseMs: budgetMs, heartbeatMs: false },
    );
    return { ...result, heldAfter: lock?.isHeld ?? true };
  };
}
