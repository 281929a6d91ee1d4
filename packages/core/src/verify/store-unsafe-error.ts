import { LockStoreError } from '../shared/errors.js';
import { describeVerdict, type StoreVerdict } from './store-verdict.js';

/**
 * The store failed a check Latch's locks rely on (see `verifyStore`): it says yes to writes it
 * should refuse, or refuses the conditional writes locks need. Nothing was locked. Not retryable:
 * the store, or the client's endpoint, must change.
 */
export class LockStoreUnsafeError extends LockStoreError {
  /** What the check found, check by check. */
  readonly verdict: StoreVerdict;

  constructor(verdict: StoreVerdict, scope: string) {
    super(
      `Latch will not lock on ${scope} (${verdict.store} store): it failed a check locks rely on, so two clients could hold one lock there. Use AWS S3 or a store that honours conditional writes (or s3ListStore), or set verify: false only if you know better.\n${describeVerdict(verdict)}`,
      { retryable: false, code: 'LOCK_STORE_UNSAFE', reason: 'misconfigured' },
    );
    this.verdict = verdict;
  }
}
