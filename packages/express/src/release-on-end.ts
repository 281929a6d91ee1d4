import type { Lock } from '@latch/core';
import type { Response } from 'express';

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
    releaseInBackground(lock);
  };
  res.on('finish', end);
  res.on('close', end);
}

/**
 * Releases `lock` without waiting. A release the store refuses is retried by core in the
 * background until it lands or the lease is lost, so nothing leaks here.
 */
export function releaseInBackground(lock: Lock): void {
  void lock.release().catch(() => undefined);
}
