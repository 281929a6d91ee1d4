import type { Lock, LockClient, LockInfo } from '@latch/core';
import { describeHolder } from './describe-holder.js';
import { formatDuration } from './duration.js';

/** How often a waiting `latch` looks again at who holds the lock, to say so when it changes. */
const HOLDER_CHECK_MS = 30_000;

/** Lease, poll and heartbeat are the client's settings; a request only says what to wait for. */
export interface AcquireRequest {
  /** Starts every line latch writes: "latch run" or "latch acquire". */
  command: string;
  name: string;
  waitMs: number;
  context: string | undefined;
  signal: AbortSignal;
}

/**
 * Acquires the lock, telling the user on stderr who holds it while waiting. The first look
 * (inspect) also proves the store is reachable, so a wrong endpoint fails at once instead of
 * being retried for the whole wait.
 */
export async function acquireReporting(
  locks: LockClient,
  request: AcquireRequest,
  say: (line: string) => void,
): Promise<Lock> {
  const { name, waitMs } = request;
  const announce = (info: LockInfo) => {
    if (info.state !== 'held' || info.owner === undefined || info.acquiredAt === undefined) return;
    say(
      `${request.command}: waiting up to ${formatDuration(waitMs)} for lock "${name}", held by ${describeHolder(
        {
          owner: info.owner,
          context: info.context,
          acquiredAt: info.acquiredAt,
          expiresAt: info.expiresAt ?? null,
        },
      )}`,
    );
  };
  const first = await locks.inspect(name);
  request.signal.throwIfAborted();
  let lastHolder = holderId(first);
  if (waitMs > 0) announce(first);

  const watcher = setInterval(() => {
    locks.inspect(name).then(
      (info) => {
        const id = holderId(info);
        if (id !== lastHolder) {
          lastHolder = id;
          announce(info);
        }
      },
      () => undefined,
    );
  }, HOLDER_CHECK_MS);
  watcher.unref();
  try {
    return await locks.acquire(name, { waitMs, context: request.context, signal: request.signal });
  } finally {
    clearInterval(watcher);
  }
}

function holderId(info: LockInfo): string {
  return info.state === 'held' ? `${info.owner}@${info.acquiredAt}` : '';
}
