// Compile-only: @latch/core's DynamoDB store in an app that has only @aws-sdk/client-dynamodb
// (no S3 client), type-checked with skipLibCheck: false.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoStore, ensureLockTable, type Lock, LockClient } from '@latch/core';

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
