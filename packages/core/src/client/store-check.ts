import type { LockStore } from '../contract/lock-store.js';
import type { ClockMode, ClockOptions } from '../shared/clock.js';
import type { LockEventReport } from '../shared/lock-events.js';
import { LockStoreUnsafeError } from '../verify/store-unsafe-error.js';
import type { StoreVerdict } from '../verify/store-verdict.js';
import { verifyStore } from '../verify/verify-store.js';

/** One probe per store scope (bucket and prefix) and process, shared by its clients. */
const verdicts = new Map<string, Promise<StoreVerdict>>();

/**
 * The check a LockClient runs on its store before its first lock, when the store asks for one
 * (`verifyScope`): it refuses a store that failed a safety check, and reports a clock further off
 * than the trusted mode allows. A probe that met an outage is not kept: the next acquire tries again.
 */
export class StoreCheck {
  #passed = false;
  #clockReported = false;

  constructor(
    private readonly store: LockStore,
    private readonly clock: ClockMode | ClockOptions | undefined,
    private readonly report: (event: LockEventReport) => void,
  ) {}

  async ensure(key: string): Promise<void> {
    if (this.#passed) return;
    const scope = await this.store.verifyScope?.();
    if (scope === undefined) {
      this.#passed = true;
      return;
    }
    let pending = verdicts.get(scope);
    if (!pending) {
      pending = verifyStore(this.store, { clock: this.clock });
      verdicts.set(scope, pending);
      pending.catch(() => verdicts.delete(scope));
    }
    const verdict = await pending;
    if (verdict.clock?.beyondTolerance && !this.#clockReported) {
      this.#clockReported = true;
      const { offsetMs, toleranceMs, detail } = verdict.clock;
      this.report({ type: 'clockSkew', key, offsetMs, toleranceMs, detail });
    }
    if (!verdict.safe) throw new LockStoreUnsafeError(verdict, scope);
    this.#passed = true;
  }
}
