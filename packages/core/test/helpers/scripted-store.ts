import { type LockStore, LockStoreError, type MemoryStore, memoryStore } from '../../src/index.js';
import type { LockRecord, WriteCondition } from '../../src/store.js';
import type { ManualTime } from './manual-time.js';

/**
 * What the next matching request meets:
 * - lose-answer: applied, but the client hears a timeout (outcome unknown);
 * - apply-late: the client hears a timeout, and the write lands only when the test calls `landLate()`;
 * - slow: applied at once, answered after `ms` of simulated time;
 * - refused: certainly not applied (a throttling error);
 * - conflict-after-apply: applied, then answered as a failed condition on a retry (maybeApplied);
 * - arrives-late: reaches the store only after `ms` of simulated time, and is applied and answered
 *   then (with `answerLost`, the client hears a timeout instead).
 */
export type ScriptedFault =
  | { kind: 'lose-answer' }
  | { kind: 'apply-late' }
  | { kind: 'slow'; ms: number }
  | { kind: 'refused' }
  | { kind: 'conflict-after-apply' }
  | { kind: 'arrives-late'; ms: number; answerLost?: boolean };

interface Plan {
  op: 'read' | 'write';
  matches: (record?: LockRecord) => boolean;
  fault: ScriptedFault;
}

/** A memory store whose next requests meet the faults a test scripts, in order. */
export function scriptedStore(time: ManualTime, inner: MemoryStore = memoryStore()) {
  const plans: Plan[] = [];
  const late: Array<() => Promise<unknown>> = [];
  const after = (ms: number) => new Promise((resolve) => time.schedule(() => resolve(undefined), ms));
  const take = (op: Plan['op'], record?: LockRecord): ScriptedFault | undefined => {
    const index = plans.findIndex((plan) => plan.op === op && plan.matches(record));
    return index < 0 ? undefined : plans.splice(index, 1)[0]!.fault;
  };
  const unknown = () => new LockStoreError('request timed out', { retryable: true, maybeApplied: true });
  let writes = 0;
  const write = async (key: string, record: LockRecord, condition: WriteCondition) => {
    writes += 1;
    const fault = take('write', record);
    if (!fault) return inner.write(key, record, condition);
    switch (fault.kind) {
      case 'lose-answer':
        await inner.write(key, record, condition);
        throw unknown();
      case 'apply-late':
        late.push(() => inner.write(key, record, condition));
        throw unknown();
      case 'slow': {
        const outcome = await inner.write(key, record, condition);
        await after(fault.ms);
        return outcome;
      }
      case 'arrives-late': {
        await after(fault.ms);
        const outcome = await inner.write(key, record, condition);
        if (fault.answerLost) throw unknown();
        return outcome;
      }
      case 'refused':
        throw new LockStoreError('SlowDown', { retryable: true });
      case 'conflict-after-apply':
        await inner.write(key, record, condition);
        return { ok: false as const, maybeApplied: true };
    }
  };
  const store: LockStore = {
    ...inner,
    write,
    read: async (key) => {
      const fault = take('read');
      if (fault?.kind === 'arrives-late') await after(fault.ms);
      else if (fault) throw new LockStoreError('read timed out', { retryable: true });
      return inner.read(key);
    },
  };
  return {
    store,
    inner,
    /** The next write whose record satisfies `matches` (default: any) meets `fault`. */
    nextWrite(fault: ScriptedFault, matches: (record?: LockRecord) => boolean = () => true) {
      plans.push({ op: 'write', matches, fault });
    },
    /** The next read fails like a network error. */
    nextReadFails() {
      plans.push({ op: 'read', matches: () => true, fault: { kind: 'refused' } });
    },
    /** The first read sent after the next write fails (the look that would resolve that write); reads before it go through. */
    readAfterNextWriteFails() {
      const after = writes;
      plans.push({ op: 'read', matches: () => writes > after, fault: { kind: 'refused' } });
    },
    /** The next read reaches the store only after `ms`: it sees the record as it is then. */
    nextReadArrivesLate(ms: number) {
      plans.push({ op: 'read', matches: () => true, fault: { kind: 'arrives-late', ms } });
    },
    /** Drops every fault still planned: requests meet none from now on. */
    clearPlans() {
      plans.splice(0);
    },
    /** Lands every write held back by apply-late, in order. */
    async landLate() {
      for (const land of late.splice(0)) await land();
    },
  };
}
