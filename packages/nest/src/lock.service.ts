import type { AcquireOptions, Campaign, CampaignOptions, Lock, LockClient, LockInfo } from '@latch/core';
import { runWithCurrentLock } from './current-lock.js';

/**
 * The LockClient's API as an injectable, for code that locks by hand. Inject the default
 * client's with `constructor(private readonly locks: LockService)`, a named one with
 * `@InjectLockService('name')`. `client` is the underlying LockClient.
 */
export class LockService {
  constructor(readonly client: LockClient) {}

  /** Acquires `key`, waiting up to `waitMs` (default: until acquired or `signal` aborts). */
  acquire<T = unknown>(key: string, options?: AcquireOptions): Promise<Lock<T>> {
    return this.client.acquire<T>(key, options);
  }

  /** One attempt, never waits: the lock, or null when it is held. */
  tryAcquire<T = unknown>(
    key: string,
    options?: Parameters<LockClient['tryAcquire']>[1],
  ): Promise<Lock<T> | null> {
    return this.client.tryAcquire<T>(key, options);
  }

  /** Acquires `key`, runs `fn(lock)` (where `currentLock()` returns the lock), and always releases. */
  withLock<R, T = unknown>(
    key: string,
    fn: (lock: Lock<T>) => R | Promise<R>,
    options?: AcquireOptions,
  ): Promise<R> {
    return this.client.withLock<R, T>(
      key,
      (lock) => runWithCurrentLock(lock as Lock<unknown>, () => fn(lock)),
      options,
    );
  }

  /** Who holds `key`, since when, with what context and token — or that it is free. */
  inspect<T = unknown>(key: string): Promise<LockInfo<T>> {
    return this.client.inspect<T>(key);
  }

  /** Releases the acquisition named by `handle` (from `lock.handle`, possibly in another process). */
  release(key: string, handle: string, options?: Parameters<LockClient['release']>[2]): Promise<void> {
    return this.client.release(key, handle, options);
  }

  /** Adopts the acquisition named by `handle` in this process, renewing it from now on. */
  resume<T = unknown>(handle: string, options?: Parameters<LockClient['resume']>[1]): Promise<Lock<T>> {
    return this.client.resume<T>(handle, options);
  }

  /** Frees `key` whoever holds it (an operator's tool); true when a holder was displaced. */
  forceRelease(key: string): Promise<boolean> {
    return this.client.forceRelease(key);
  }

  /** Leader election: campaign for `key`, lead a term, campaign again. */
  campaign<T = unknown>(key: string, options: CampaignOptions<T>): Campaign {
    return this.client.campaign<T>(key, options);
  }
}
