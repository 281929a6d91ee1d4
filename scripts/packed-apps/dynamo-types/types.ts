// Compile-only: @latch/core's DynamoDB store in an app that has only @aws-sdk/client-dynamodb
// (no S3 client), type-checked with skipLibCheck: false, as ES modules and as CommonJS (node10,
// where `@latch/core/store` and `@latch/core/http` resolve only through core's typesVersions).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoStore, ensureLockTable, type Lock, LockClient } from '@latch/core';
import { type LockHttpAnswer, lockErrorToHttp, lockStoreLogEntry } from '@latch/core/http';
import {
  decodeRecord,
  encodeRecord,
  type LockRecord,
  type LockStore,
  LockStoreError,
  type WriteOutcome,
} from '@latch/core/store';

interface InvoiceProgress {
  chargedCents: number;
}

export async function chargeInvoice(client: DynamoDBClient, invoiceId: string): Promise<number> {
  await ensureLockTable(client, { table: 'locks' });
  const locks = new LockClient({ store: dynamoStore({ client, table: 'locks' }), leaseMs: 15_000 });
  const lock: Lock<InvoiceProgress> = await locks.acquire<InvoiceProgress>(`invoice/${invoiceId}`, {
    waitMs: 10_000,
  });
  try {
    const charged = (lock.data?.chargedCents ?? 0) + 1250;
    await lock.update({ chargedCents: charged });
    return charged;
  } finally {
    await lock.release();
    await locks.close();
  }
}

export const client = new DynamoDBClient({ region: 'us-east-1' });

/** A store that refuses every write: a store author's test double, typed with the store kit. */
export function readOnly(inner: LockStore): LockStore {
  const refuse = async (): Promise<WriteOutcome> => {
    throw new LockStoreError('read-only store', { retryable: false, reason: 'denied' });
  };
  return {
    kind: inner.kind,
    maxRecordBytes: inner.maxRecordBytes,
    checkKey: (key) => inner.checkKey(key),
    recordBytes: (record) => inner.recordBytes(record),
    read: (key) => inner.read(key),
    write: refuse,
    delete: refuse,
  };
}

export function copyRecord(key: string, record: LockRecord): LockRecord {
  return decodeRecord(key, encodeRecord(record));
}

/** How an HTTP adapter of one's own answers a lock error and logs a store failure. */
export function answer(error: unknown): { answer: LockHttpAnswer | undefined; log?: string } {
  return {
    answer: lockErrorToHttp(error),
    ...(error instanceof LockStoreError ? { log: lockStoreLogEntry(error).message } : {}),
  };
}
