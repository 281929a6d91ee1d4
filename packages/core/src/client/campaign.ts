import { LockError, LockLostError } from '../shared/errors.js';
import type { Scheduler } from '../shared/scheduler.js';
import { sleep } from '../shared/sleep.js';
import type { Lock } from './lock.js';
import type { AcquireOptions } from './lock-options.js';

export interface CampaignOptions<T = unknown>
  extends Pick<AcquireOptions, 'leaseMs' | 'heartbeatMs' | 'context'> {
  /**
   * Called at the start of each term with the term's lock (fencingToken = term number; signal
   * aborts on loss, and when the client is closed: reason a LockStoreError LOCK_CLIENT_CLOSED).
   */
  onElected(lock: Lock<T>): void | Promise<void>;
  /** Called when a term ends: 'lost' (lease lost) or 'resigned' (campaign stopped, or its client closed). */
  onDemoted?(reason: 'lost' | 'resigned', error?: LockLostError): void;
  /** Called with errors the campaign survives (store outages, onElected throwing); it keeps campaigning. */
  onError?(error: unknown): void;
  /** Stops the campaign like `stop()`. */
  signal?: AbortSignal;
}

/** Every option of campaign(): the compiler fails here when one is added or dropped. */
const CAMPAIGN_OPTIONS: Record<keyof CampaignOptions, true> = {
  leaseMs: true,
  heartbeatMs: true,
  context: true,
  onElected: true,
  onDemoted: true,
  onError: true,
  signal: true,
};
export const CAMPAIGN_OPTION_KEYS: readonly string[] = Object.keys(CAMPAIGN_OPTIONS);

export interface Campaign {
  /** True while this campaigner leads. */
  readonly isLeader: boolean;
  /** The current term's lock while leading. */
  readonly lock: Lock<unknown> | undefined;
  /** Stops campaigning; a leader resigns (releases) so a follower takes over at once. */
  stop(): Promise<void>;
  /** Settles when the campaign has stopped. */
  readonly done: Promise<void>;
}

/** What a campaign needs of the client it campaigns through: acquiring, and knowing it closed. */
export interface Campaigner {
  acquire<T>(key: string, options: AcquireOptions): Promise<Lock<T>>;
  /**
   * Aborts as the client's close() begins, before it releases the locks it holds: the campaign
   * stops, and a term it leads ends first (close() gives its lock up, and another replica may
   * be elected at once).
   */
  readonly closing: AbortSignal;
  /** The client's clock and timers, for the pauses between tries. */
  readonly time: Scheduler;
}

/** Leader election over one key: campaign until elected, lead a term, campaign again after a loss. */
export function startCampaign<T>(client: Campaigner, key: string, options: CampaignOptions<T>): Campaign {
  const stopping = new AbortController();
  const { time } = client;
  let current: Lock<T> | undefined;
  const onExternalAbort = () => stopping.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onExternalAbort, { once: true });
  if (options.signal?.aborted) stopping.abort(options.signal.reason);
  const { closing } = client;
  const onClosing = () => {
    current?.abortSignal(closing.reason);
    stopping.abort(closing.reason);
  };
  closing.addEventListener('abort', onClosing, { once: true });
  if (closing.aborted) stopping.abort(closing.reason);

  const report = (error: unknown) => {
    try {
      options.onError?.(error);
    } catch {
      // the campaign must outlive its hooks
    }
  };

  const run = async () => {
    let failures = 0;
    while (!stopping.signal.aborted) {
      let lock: Lock<T>;
      try {
        lock = await client.acquire<T>(key, {
          leaseMs: options.leaseMs,
          heartbeatMs: options.heartbeatMs,
          context: options.context,
          signal: stopping.signal,
        });
      } catch (error) {
        if (stopping.signal.aborted || closing.aborted) break;
        report(error);
        await sleep(time, Math.min(100 * 2 ** failures++, 5000), stopping.signal, { keepAlive: true }).catch(
          () => undefined,
        );
        continue;
      }
      failures = 0;
      if (closing.aborted) {
        // Won as the client closed: no term begins, and close() gives the lock back.
        lock.abortSignal(closing.reason);
        break;
      }
      current = lock;
      try {
        await options.onElected(lock);
      } catch (error) {
        // A leader that cannot lead resigns, so another campaigner gets a chance.
        report(error);
        current = undefined;
        await lock.release().catch(report);
        options.onDemoted?.('resigned');
        await sleep(time, 100, stopping.signal, { keepAlive: true }).catch(() => undefined);
        continue;
      }
      await untilEither(lock.signal, stopping.signal);
      current = undefined;
      // Aborted by the client's close(), which releases it: a resignation, not a loss.
      const closedTerm = closing.aborted && lock.signal.reason === closing.reason;
      if (lock.signal.aborted && !closedTerm) {
        options.onDemoted?.(
          'lost',
          lock.signal.reason instanceof LockLostError ? lock.signal.reason : undefined,
        );
        continue;
      }
      try {
        await lock.release();
      } catch (error) {
        if (!(error instanceof LockError)) throw error;
        report(error);
      }
      options.onDemoted?.('resigned');
    }
    options.signal?.removeEventListener('abort', onExternalAbort);
    closing.removeEventListener('abort', onClosing);
  };

  const done = run();
  return {
    get isLeader() {
      return current?.isHeld === true;
    },
    get lock() {
      return current?.isHeld ? (current as Lock<unknown>) : undefined;
    },
    async stop() {
      stopping.abort(new Error('campaign stopped'));
      await done;
    },
    done,
  };
}

function untilEither(a: AbortSignal, b: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (a.aborted || b.aborted) return resolve();
    const finish = () => {
      a.removeEventListener('abort', finish);
      b.removeEventListener('abort', finish);
      resolve();
    };
    a.addEventListener('abort', finish, { once: true });
    b.addEventListener('abort', finish, { once: true });
  });
}
