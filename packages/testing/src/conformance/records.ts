import { randomUUID } from 'node:crypto';
import type { LeaseHolderShape, LockRecordShape } from './store-shapes.js';

/** A free record (no holder) with fencing token `token`, and `data` when given. */
export function freeRecord(token: number, data?: unknown): LockRecordShape {
  const record: LockRecordShape = { token, holder: null, writeId: randomUUID() };
  if (data !== undefined) record.data = data;
  return record;
}

/** A held record with fencing token `token`: a plausible lease, with `holder` fields overriding it. */
export function heldRecord(
  token: number,
  holder: Partial<LeaseHolderShape> = {},
  data?: unknown,
): LockRecordShape {
  return {
    ...freeRecord(token, data),
    holder: {
      owner: 'host-a:1234:abcd',
      lockId: randomUUID(),
      acquiredAt: 1_700_000_000_000,
      renewedAt: 1_700_000_001_000,
      leaseMs: 30_000,
      expiresAt: 1_700_000_031_000,
      context: 'nightly report',
      ...holder,
    },
  };
}
