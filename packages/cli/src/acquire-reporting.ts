import type { HolderSummary, Lock, LockClient, LockInfo } from '@latch/core';
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
  /** How many may hold the lock at once (1: a plain lock). */
  limit: number;
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
  const { name, waitMs, limit } = request;
  const announce = (info: LockInfo) => {
    const holders = blockingHolders(info, limit);
    if (holders.length === 0) return;
    const lock = limit > 1 ? `lock "${name}" (--limit ${limit})` : `lock "${name}"`;
    say(
      `${request.command}: waiting up to ${formatDuration(waitMs)} for ${lock}, held by ${holders
        .map(describeHolder)
        .join('; ')}`,
    );
  };
  const first = await locks.inspect(name);
  request.signal.throwIfAborted();
  let lastHolder = holdersId(first);
  if (waitMs > 0) announce(first);

  const watcher = setInterval(() => {
    locks.inspect(name).then(
      (info) => {
        const id = holdersId(info);
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
    return await locks.acquire(name, { waitMs, context: request.context, limit, signal: request.signal });
  } finally {
    clearInterval(watcher);
  }
}

/**
 * Who keeps this acquisition waiting: the holder of a held plain lock, or every live holder of
 * a key whose `limit` places are all taken. None when there is a free place.
 */
function blockingHolders(info: LockInfo, limit: number): HolderSummary[] {
  if (limit === 1) {
    if (info.state !== 'held' || info.owner === undefined || info.acquiredAt === undefined) return [];
    const { owner, context, acquiredAt } = info;
    return [{ owner, context, acquiredAt, expiresAt: info.expiresAt ?? null }];
  }
  const live = info.holders.filter((holder) => holder.state === 'held');
  return live.length >= limit ? live : [];
}

/** Changes when a holder comes or goes, so the wait is announced again. */
function holdersId(info: LockInfo): string {
  if (info.state !== 'held') return '';
  if (info.limit > 1) return info.holders.map((holder) => `${holder.owner}@${holder.acquiredAt}`).join(',');
  return `${info.owner}@${info.acquiredAt}`;
}
