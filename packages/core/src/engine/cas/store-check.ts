import type { LockStore } from '../../contract/lock-store.js';
import type { ClockMode, ClockOptions } from '../../shared/clock.js';
import { LockStoreError } from '../../shared/errors.js';
import type { LockEventReport } from '../../shared/lock-events.js';
import { LockStoreUnsafeError } from '../../verify/store-unsafe-error.js';
import type { StoreVerdict } from '../../verify/store-verdict.js';
import { verifyLockStore } from '../../verify/verify-store.js';

/** One probe per store scope (bucket and prefix) and process, shared by its clients. */
const verdicts = new Map<string, Promise<StoreVerdict>>();

/**
 * The check a client runs on its store before its first claim, when the store asks for one
 * (`verifyScope`): it refuses a store that failed a safety check (LockStoreUnsafeError, not
 * retryable), and reports a clock further off than the trusted mode allows. A probe that met an
 * outage throws that store error, as the claim would, and is not kept: the next claim tries again.
 */
export class StoreCheck {
  #passed = false;
  #clockReported = false;

  constructor(
    private readonly store: LockStore,
    private readonly clock: ClockMode | ClockOptions | undefined,
    private readonly report: (event: LockEventReport) => void,
  ) {}

  /** True once nothing is left to check: a claim then goes ahead without awaiting anything. */
  get passed(): boolean {
    return this.#passed || this.store.verifyScope === undefined;
  }

  async ensure(key: string): Promise<void> {
    if (this.passed) return;
    const scope = await this.store.verifyScope?.();
    if (scope === undefined) {
      this.#passed = true;
      return;
    }
    // The lock's own key first: a store that cannot be reached, or is set up wrong, fails here with
    // the very error the claim would meet, after one request.
    await this.store.read(key);
    let pending = verdicts.get(scope);
    if (!pending) {
      pending = verifyLockStore(this.store, { clock: this.clock }, true);
      verdicts.set(scope, pending);
      pending.catch(() => verdicts.delete(scope));
    }
    const verdict = await pending.catch((error: unknown) => {
      throw probeFailed(error, scope);
    });
    if (verdict.clock?.beyondTolerance && !this.#clockReported) {
      this.#clockReported = true;
      const { offsetMs, toleranceMs, detail } = verdict.clock;
      this.report({ type: 'clockSkew', key, offsetMs, toleranceMs, detail });
    }
    if (!verdict.safe) throw new LockStoreUnsafeError(verdict, scope);
    this.#passed = true;
  }
}

/** A failure met by the probe after the store was reached, said as such: its requests were about the probe's own keys. */
function probeFailed(error: unknown, scope: string): unknown {
  if (!(error instanceof LockStoreError)) return error;
  return new LockStoreError(
    `Checking ${scope} before the first lock (the store's verify option) failed: ${error.message}`,
    { cause: error, retryable: error.retryable, code: error.code, reason: error.reason },
  );
}
