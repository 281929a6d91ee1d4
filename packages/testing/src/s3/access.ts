import type { IncomingHttpHeaders } from 'node:http';
import { type S3Error, s3Error } from './errors.js';

/** What the server does with requests signed by one access key: serve them, or refuse them. */
export type S3AccessKeyVerdict = 'allow' | 'deny';

/** The access key `clientConfig()` hands out; known to the server even when `accessKeys` leaves it out. */
export const CLIENT_CONFIG_ACCESS_KEY = 'latch-testing';

/**
 * The `accessKeys` option, checked: a plain object whose values are all 'allow' or 'deny'.
 * Undefined (every key accepted) when the option is absent.
 */
export function accessKeyTable(
  accessKeys: Readonly<Record<string, S3AccessKeyVerdict>> | undefined,
): ReadonlyMap<string, S3AccessKeyVerdict> | undefined {
  if (accessKeys === undefined) return undefined;
  if (typeof accessKeys !== 'object' || accessKeys === null || Array.isArray(accessKeys)) {
    throw new TypeError(
      'startS3Server(): accessKeys must be an object of access key ids to "allow" or "deny"',
    );
  }
  const table = new Map<string, S3AccessKeyVerdict>([[CLIENT_CONFIG_ACCESS_KEY, 'allow']]);
  for (const [accessKeyId, verdict] of Object.entries(accessKeys)) {
    if (verdict !== 'allow' && verdict !== 'deny') {
      throw new TypeError(
        `startS3Server(): accessKeys.${accessKeyId} must be "allow" or "deny", not ${JSON.stringify(verdict)}`,
      );
    }
    table.set(accessKeyId, verdict);
  }
  return table;
}

/**
 * The access key id a request is signed with: from a SigV4 `Authorization` header's credential
 * scope (`Credential=AKID/date/region/s3/aws4_request`), a presigned URL's `X-Amz-Credential`, or
 * SigV2's `AWS AKID:signature` / `AWSAccessKeyId`. Undefined for an unsigned request.
 */
export function accessKeyIdOf(headers: IncomingHttpHeaders, query: URLSearchParams): string | undefined {
  const authorization = headers.authorization ?? '';
  const scope =
    /\bCredential=([^/,\s]*)\//.exec(authorization)?.[1] ??
    /^AWS ([^:\s]+):/.exec(authorization)?.[1] ??
    query.get('X-Amz-Credential')?.split('/')[0] ??
    query.get('AWSAccessKeyId') ??
    undefined;
  return scope === '' ? undefined : scope;
}

/**
 * S3's answer to a request the access keys do not let in, or undefined to serve it: an unknown key
 * gets 403 InvalidAccessKeyId (naming the key, as S3 does), a denied key or an unsigned request
 * 403 AccessDenied.
 */
export function refusal(
  table: ReadonlyMap<string, S3AccessKeyVerdict>,
  headers: IncomingHttpHeaders,
  query: URLSearchParams,
): S3Error | undefined {
  const accessKeyId = accessKeyIdOf(headers, query);
  if (accessKeyId === undefined) return s3Error('AccessDenied');
  const verdict = table.get(accessKeyId);
  if (verdict === 'allow') return undefined;
  if (verdict === 'deny') return s3Error('AccessDenied');
  return s3Error('InvalidAccessKeyId', { extra: { AWSAccessKeyId: accessKeyId } });
}
