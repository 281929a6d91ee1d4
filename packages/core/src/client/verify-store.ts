import type { LockStore } from '../contract/lock-store.js';
import { type LeaseStrategy, strategyProbeOf } from '../engine/lease-engine.js';
import { LockConfigError } from '../shared/errors.js';
import { checkOptionKeys } from '../shared/option-keys.js';
import type { StoreVerdict } from '../verify/store-verdict.js';
import { type VerifyStoreOptions, verifyLockStore } from '../verify/verify-store.js';

const VERIFY_OPTION_KEYS = ['clock'];

/**
 * Checks, with a short probe that cleans up after itself, that `store` does what Latch's locks
 * rely on there: for a LockStore (S3, DynamoDB, memory, your own) its conditional writes, reads
 * and the store's clock; for `s3ListStore` its listings (order, and consistency after a write
 * and a delete). An outage is thrown as the LockStoreError it is, not judged.
 */
export function verifyStore(
  store: LockStore | LeaseStrategy,
  options: VerifyStoreOptions = {},
): Promise<StoreVerdict> {
  checkOptionKeys('verifyStore()', options, VERIFY_OPTION_KEYS);
  const probe = strategyProbeOf(store);
  if (probe) return probe();
  const lockStore = store as Partial<LockStore>;
  if (typeof lockStore.read !== 'function' || typeof lockStore.write !== 'function') {
    throw new LockConfigError(
      'verifyStore(store) needs a store: s3Store({ client, bucket }), dynamoStore({ client, table }), s3ListStore({ client, bucket }) or memoryStore().',
    );
  }
  return verifyLockStore(store as LockStore, options);
}
