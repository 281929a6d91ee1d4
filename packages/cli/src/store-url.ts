import { UsageError } from './usage-error.js';

/** Where locks live, as named by `--store`. */
export type StoreUrl =
  | { kind: 's3'; bucket: string; prefix: string }
  | { kind: 's3+list'; bucket: string; prefix: string }
  | { kind: 'dynamodb'; table: string }
  | { kind: 'memory' };

const EXAMPLES = 's3://bucket/prefix, s3+list://bucket/prefix, dynamodb://table or memory:';
const SHAPE = /^([a-z][a-z0-9+.-]*):(?:\/\/([^/?#]*)(\/[^?#]*)?)?$/i;
// S3 bucket naming rules, loosely: what S3 would refuse anyway, said before any request.
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const TABLE = /^[A-Za-z0-9_.-]{3,255}$/;

/** Parses `--store`: s3://bucket/prefix, s3+list://bucket/prefix, dynamodb://table, memory:. */
export function parseStoreUrl(text: string): StoreUrl {
  const match = SHAPE.exec(text.trim());
  if (!match) throw new UsageError(`--store ${JSON.stringify(text)} is not a store URL; use ${EXAMPLES}.`);
  const scheme = match[1]!.toLowerCase();
  const host = match[2];
  const path = match[3] ?? '';
  switch (scheme) {
    case 's3':
    case 's3+list': {
      if (!host) throw new UsageError(`--store ${scheme}:// needs a bucket: ${scheme}://my-bucket/locks.`);
      if (!BUCKET.test(host)) {
        throw new UsageError(
          `--store: ${JSON.stringify(host)} is not a valid S3 bucket name (3-63 lowercase letters, digits, dots and hyphens).`,
        );
      }
      return { kind: scheme, bucket: host, prefix: toPrefix(path) };
    }
    case 'dynamodb': {
      if (!host) throw new UsageError('--store dynamodb:// needs a table: dynamodb://locks.');
      if (!TABLE.test(host)) {
        throw new UsageError(
          `--store: ${JSON.stringify(host)} is not a valid DynamoDB table name (3-255 letters, digits, "_", "-", ".").`,
        );
      }
      if (path !== '' && path !== '/') {
        throw new UsageError(`--store dynamodb://${host} takes no path; got ${JSON.stringify(path)}.`);
      }
      return { kind: 'dynamodb', table: host };
    }
    case 'memory':
      if (host !== undefined || path !== '')
        throw new UsageError('--store memory: takes nothing after the colon.');
      return { kind: 'memory' };
    default:
      throw new UsageError(`--store: unknown store scheme "${scheme}:"; use ${EXAMPLES}.`);
  }
}

/** "locks" and "/locks/" both mean objects under "locks/"; no path means the bucket's top level. */
function toPrefix(path: string): string {
  const trimmed = path.replace(/^\/+/, '');
  if (trimmed === '' || trimmed.endsWith('/')) return trimmed;
  return `${trimmed}/`;
}
