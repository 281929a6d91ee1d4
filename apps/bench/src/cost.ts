import { PRICES, type PricedBackend } from './prices.js';

/** Requests counted per operation name ('PutObject', 'UpdateItem', 'evalsha', ...). */
export type RequestsByOp = Readonly<Record<string, number>>;

const S3_PUT_CLASS = new Set(['PutObject', 'CopyObject', 'PostObject', 'ListObjectsV2', 'ListObjects']);
const S3_FREE = new Set(['DeleteObject', 'DeleteObjects', 'AbortMultipartUpload']);
const DYNAMODB_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);
const DYNAMODB_READS = new Set(['GetItem']);

/**
 * US dollars for one request of `op` on `backend`, or null when the backend has no
 * per-request price (Redis is self-hosted). Assumptions, true for every lock record in this
 * bench: DynamoDB items are under 1 KB (1 write request unit per write, conditional
 * failures included) and reads are strongly consistent and under 4 KB (1 read request unit).
 */
export function dollarsPerRequest(backend: PricedBackend, op: string): number | null {
  switch (backend) {
    case 'memory':
      return 0;
    case 'redis':
      return null;
    case 's3':
    case 's3-list': {
      if (S3_FREE.has(op)) return PRICES.s3Standard.deletePer1000 / 1000;
      if (S3_PUT_CLASS.has(op)) return PRICES.s3Standard.putCopyPostListPer1000 / 1000;
      return PRICES.s3Standard.getAndOtherPer1000 / 1000;
    }
    case 'dynamodb': {
      if (DYNAMODB_WRITES.has(op)) return PRICES.dynamodbOnDemand.perMillionWriteRequestUnits / 1e6;
      if (DYNAMODB_READS.has(op)) return PRICES.dynamodbOnDemand.perMillionReadRequestUnits / 1e6;
      throw new Error(`No DynamoDB price for operation "${op}"; add it to cost.ts.`);
    }
  }
}

/** Dollars for the given request counts, or null when the backend has no per-request price. */
export function dollarsFor(backend: PricedBackend, requests: RequestsByOp): number | null {
  let total = 0;
  for (const [op, count] of Object.entries(requests)) {
    const price = dollarsPerRequest(backend, op);
    if (price === null) return null;
    total += price * count;
  }
  return total;
}

/**
 * Dollars per million units of work (lock cycles, hand-offs) given the requests counted for
 * `units` of it. Null when the backend has no per-request price or no work was done.
 */
export function dollarsPerMillion(
  backend: PricedBackend,
  requests: RequestsByOp,
  units: number,
): number | null {
  if (!(units > 0)) return null;
  const dollars = dollarsFor(backend, requests);
  return dollars === null ? null : (dollars / units) * 1e6;
}
