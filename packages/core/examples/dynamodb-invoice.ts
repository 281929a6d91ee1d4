import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoStore, LockClient } from '@latch/core';

interface InvoiceProgress {
  chargedCents: number;
}

// Charge an invoice at most once at a time, remembering progress in the lock itself.
export async function chargeInvoice(
  dynamodb: DynamoDBClient,
  table: string,
  invoiceId: string,
): Promise<number> {
  const locks = new LockClient({ store: dynamoStore({ client: dynamodb, table }), leaseMs: 15_000 });
  await using lock = await locks.acquire<InvoiceProgress>(`invoice/${invoiceId}`, { waitMs: 10_000 });
  const charged = (lock.data?.chargedCents ?? 0) + 1250;
  // update() stores data in the lock record without unlocking; release({ data }) would too.
  await lock.update({ chargedCents: charged });
  return charged;
}
