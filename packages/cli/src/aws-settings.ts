import { UsageError } from './usage-error.js';

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Whether the S3 client should address buckets by path (http://host/bucket/key) instead of
 * by host name. S3-compatible servers and local test servers usually need it, so it is on
 * whenever an endpoint URL is set for S3 through the environment; AWS_S3_FORCE_PATH_STYLE
 * overrides that either way. Region, credentials, profile and the endpoint itself are left to
 * the AWS SDK, which reads them from the standard environment variables and config files.
 */
export function s3PathStyle(env: Env): boolean {
  const forced = env.AWS_S3_FORCE_PATH_STYLE;
  if (forced !== undefined && forced !== '') {
    const value = forced.trim().toLowerCase();
    if (value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
    throw new UsageError(`AWS_S3_FORCE_PATH_STYLE must be true or false, got ${JSON.stringify(forced)}.`);
  }
  return Boolean(env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL);
}
