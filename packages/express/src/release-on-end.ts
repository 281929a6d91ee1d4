import { type Lock, LockLostError } from '@latch/core';
import type { Response } from 'express';

const FIRST_RETRY_MS = 100;
const LONGEST_RETRY_MS = 5_000;

/**
 * Releases `lock` once, as soon as the response is done: sent ('finish'), or the connection
 * went away before that ('close'). Node emits 'close' after 'finish' too; only the first counts.
 */
export function releaseWhenResponseEnds(res: Response, lock: Lock): void {
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    res.off('finish', end);
    res.off('close', end);
    void releaseUntilDone(lock);
  };
  res.on('finish', end);
  res.on('close', end);
}

/**
 * Releases `lock`, retrying while the store fails. Giving up would leak it: after a failed
 * release the lock keeps renewing its lease. The loop ends when the release lands, or when
 * the lease is lost (then it is nobody's to release).
 */
export async function releaseUntilDone(lock: Lock): Promise<void> {
  for (let attempt = 0; lock.isHeld; attempt++) {
    try {
      await lock.release();
      return;
    } catch (error) {
      if (error instanceof LockLostError) return;
      await pause(Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** attempt));
    }
  }
}

function pause(ms: number): Promise<void> {
  // Never keeps the process alive: if it exits meanwhile, the lease simply runs out.
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
