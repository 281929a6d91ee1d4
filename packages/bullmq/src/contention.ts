import { type HolderSummary, type LockClient, LockConfigError, LockTimeoutError } from '@latch/core';
import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import { contentionDelayMs } from './backoff.js';
import { delaysSoFar } from './delay-count.js';
import type { ResolvedJobLockOptions } from './options.js';

/**
 * Another job holds `key` (or `limit` other jobs do): send this one back to the delayed set
 * (BullMQ's own way to delay a job from inside its processor, which uses no attempt and frees the
 * worker slot at once), or fail it when `onLocked` is 'fail' or it has been delayed `maxDelays`
 * times already.
 */
export async function handleContention<DataType, ResultType, NameType extends string>(
  job: Job<DataType, ResultType, NameType>,
  token: string | undefined,
  key: string,
  options: ResolvedJobLockOptions<DataType, ResultType, NameType>,
): Promise<never> {
  if (options.onLocked === 'fail') {
    const holder = await lastHolder(options.client, key);
    // A limit marks the error as a semaphore's, as core's own timeouts are.
    throw new LockTimeoutError(key, 0, holder, options.limit > 1 ? { limit: options.limit } : undefined);
  }
  const delays = delaysSoFar(job);
  if (delays >= options.maxDelays) {
    const holder = await lastHolder(options.client, key);
    const heldBy = holder ? `, last held by ${holder.context ?? holder.owner}` : '';
    const stillHeld =
      options.limit > 1
        ? `Lock "${key}" still had all ${options.limit} slots (limit: ${options.limit}) taken`
        : `Lock "${key}" was still held`;
    throw new UnrecoverableError(
      `${stillHeld} after this job had been delayed ${delays} times (maxDelays: ${options.maxDelays})${heldBy}. ` +
        'Raise maxDelays or backoff.maxMs if jobs of one key can queue up for longer than that.',
    );
  }
  if (token === undefined) {
    throw new LockConfigError(
      `Job ${job.id} found lock "${key}" held but has no BullMQ token to move itself to the delayed set: call the processor from withLock as BullMQ does, (job, token).`,
    );
  }
  const pauseMs = contentionDelayMs(delays, options.backoff);
  await job.moveToDelayed(Date.now() + pauseMs, token);
  // Tells the worker the job already moved itself: no attempt is used, no failure recorded.
  const heldBy =
    options.limit > 1 ? `has all ${options.limit} slots taken by other jobs` : 'is held by another job';
  throw new DelayedError(`Lock "${key}" ${heldBy}; delayed by ${pauseMs} ms.`);
}

/** Who holds the key, for failure messages; a failed look-up only makes the message shorter. */
async function lastHolder(client: LockClient, key: string): Promise<HolderSummary | undefined> {
  try {
    const info = await client.inspect(key);
    if (info.state !== 'held' || info.owner === undefined || info.acquiredAt === undefined) return undefined;
    return {
      owner: info.owner,
      context: info.context,
      acquiredAt: info.acquiredAt,
      expiresAt: info.expiresAt ?? null,
    };
  } catch {
    return undefined;
  }
}
