import type { IncomingHttpHeaders } from 'node:http';

/** What a request to a backend is, as far as its latency goes. */
export type OperationClass = 's3-get' | 's3-put' | 'dynamodb-read' | 'dynamodb-write';

/** DynamoDB operations that only read (the X-Amz-Target header names the operation). */
const DYNAMODB_READS = new Set([
  'GetItem',
  'BatchGetItem',
  'Query',
  'Scan',
  'TransactGetItems',
  'DescribeTable',
  'ListTables',
]);

/**
 * Classifies one HTTP request. S3: GET and HEAD read (and so do listings); PUT, POST and
 * DELETE write. DynamoDB: every request is a POST, the operation is in X-Amz-Target
 * ("DynamoDB_20120810.PutItem").
 */
export function operationClass(
  service: 's3' | 'dynamodb',
  method: string | undefined,
  headers: IncomingHttpHeaders,
): OperationClass {
  if (service === 's3') return method === 'GET' || method === 'HEAD' ? 's3-get' : 's3-put';
  const target = headers['x-amz-target'];
  const operation = (Array.isArray(target) ? target[0] : target)?.split('.').pop() ?? '';
  return DYNAMODB_READS.has(operation) ? 'dynamodb-read' : 'dynamodb-write';
}
