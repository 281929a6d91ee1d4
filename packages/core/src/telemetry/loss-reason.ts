import { type LockLossReason, LockLostError } from '../shared/errors.js';

/**
 * Why a held lock was lost, for `latch.lost.reason`: the reason its LockLostError carries, and
 * `failed` for anything else that ended a lease.
 */
export function lossReason(error: unknown): LockLossReason {
  return error instanceof LockLostError ? error.reason : 'failed';
}
