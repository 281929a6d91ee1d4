import { decodeRecord, encodeRecord } from '../../src/contract/record-codec.js';
import { type LockStore, LockStoreError, type MemoryStore, memoryStore } from '../../src/index.js';
import type { ClaimOutcome, ClaimRequest, LockRecord } from '../../src/store.js';
import type { ManualTime } from './manual-time.js';
import { type ScriptedFault, scriptedStore } from './scripted-store.js';

/**
 * The scripted store plus DynamoDB's one-request `claim` (same condition as dynamoStore's
 * UpdateItem: absent, or a well-formed record with token >= floor that is free, expired before
 * `expiredBefore`, or at `version`), whose requests can meet the same faults.
 */
export function oneRequestClaimStore(time: ManualTime, inner: MemoryStore = memoryStore()) {
  const scripted = scriptedStore(time, inner);
  const claimPlans: ScriptedFault[] = [];
  const late: Array<() => void> = [];
  let versions = 0;
  const applyClaim = (key: string, request: ClaimRequest): ClaimOutcome => {
    const doc = inner.documents.get(key);
    const current = doc ? { version: doc.version, record: decodeRecord(key, doc.text) } : null;
    const floor = request.tokenFloor ?? 0;
    const holder = current?.record.holder;
    const claimable =
      current === null ||
      (current.record.token >= floor &&
        (!holder ||
          (request.expiredBefore !== undefined &&
            holder.expiresAt !== null &&
            holder.expiresAt < request.expiredBefore) ||
          (request.version !== undefined && request.version === current.version)));
    if (!claimable) return { ok: false, current };
    const record: LockRecord = {
      ...request.record,
      token: (current ? current.record.token : floor) + 1,
    };
    if (current?.record.data !== undefined) record.data = current.record.data;
    if (current?.record.extensions !== undefined) record.extensions = current.record.extensions;
    const version = `c${++versions}`;
    inner.documents.set(key, { version, text: encodeRecord(record) });
    return { ok: true, version, record };
  };
  const claim = async (key: string, request: ClaimRequest): Promise<ClaimOutcome> => {
    const fault = claimPlans.shift();
    const unknown = () => new LockStoreError('claim timed out', { retryable: true, maybeApplied: true });
    switch (fault?.kind) {
      case undefined:
        return applyClaim(key, request);
      case 'lose-answer':
        applyClaim(key, request);
        throw unknown();
      case 'apply-late':
        late.push(() => void applyClaim(key, request));
        throw unknown();
      case 'slow': {
        const outcome = applyClaim(key, request);
        await new Promise((resolve) => time.schedule(() => resolve(undefined), fault.ms));
        return outcome;
      }
      case 'arrives-late':
        await new Promise((resolve) => time.schedule(() => resolve(undefined), fault.ms));
        return applyClaim(key, request);
      case 'refused':
        throw new LockStoreError('ProvisionedThroughputExceeded', { retryable: true });
      case 'conflict-after-apply': {
        applyClaim(key, request);
        const doc = inner.documents.get(key)!;
        return {
          ok: false,
          current: { version: doc.version, record: decodeRecord(key, doc.text) },
          maybeApplied: true,
        };
      }
    }
  };
  const store: LockStore = { ...scripted.store, kind: 'dynamo-like', claim };
  return {
    ...scripted,
    store,
    /** The same records and faults without the one-request claim. */
    withoutClaim: scripted.store,
    /** The next one-request claim meets `fault`. */
    nextClaim(fault: ScriptedFault) {
      claimPlans.push(fault);
    },
    /** Lands every claim held back by apply-late, in order. */
    landLateClaims() {
      for (const land of late.splice(0)) land();
    },
    /** Lands the first claim still held back by apply-late. */
    landNextLateClaim() {
      late.shift()?.();
    },
  };
}
