import type { Env } from './aws-settings.js';
import { parseDuration } from './duration.js';
import { defaultContext, defaultLockName } from './github-defaults.js';
import { parseLimit } from './limit.js';
import { parseStoreUrl, type StoreUrl } from './store-url.js';
import { UsageError } from './usage-error.js';

/** Flags every command that names a lock takes. */
export const storeFlags = {
  store: { type: 'string' },
  name: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Flags of the commands that acquire. */
export const acquireFlags = {
  ...storeFlags,
  lease: { type: 'string' },
  wait: { type: 'string' },
  poll: { type: 'string' },
  context: { type: 'string' },
  limit: { type: 'string' },
} as const;

export const DEFAULT_LEASE = '15m';
export const DEFAULT_POLL = '5s';

export interface StoreSettings {
  store: StoreUrl;
  name: string;
}

export interface AcquireSettings extends StoreSettings {
  leaseMs: number;
  waitMs: number;
  pollMs: number;
  context: string | undefined;
  /** How many may hold the lock at once: 1 is a plain lock. */
  limit: number;
}

/** `--store`, or LATCH_STORE when it is not given, parsed; `hint` ends the error when neither is set. */
export function resolveStoreUrl(store: string | undefined, env: Env, hint: string): StoreUrl {
  const text = store ?? env.LATCH_STORE;
  if (!text) throw new UsageError(`--store is required (or set LATCH_STORE)${hint}`);
  return parseStoreUrl(text);
}

/** `--store` (or LATCH_STORE) and `--name` (or the GitHub workflow/job), checked. */
export function resolveStoreSettings(
  values: { store?: string | undefined; name?: string | undefined },
  env: Env,
): StoreSettings {
  const store = resolveStoreUrl(values.store, env, ', e.g. --store s3://my-bucket/locks.');
  const name = values.name ?? defaultLockName(env);
  if (name === undefined) {
    throw new UsageError(
      `--name is required outside GitHub Actions (where it defaults to "$GITHUB_WORKFLOW/$GITHUB_JOB").`,
    );
  }
  if (name === '') throw new UsageError('--name must not be empty.');
  return { store, name };
}

/** Lease, wait, poll, context and limit, with their defaults: --wait defaults to the lease. */
export function resolveAcquireSettings(
  values: {
    store?: string | undefined;
    name?: string | undefined;
    lease?: string | undefined;
    wait?: string | undefined;
    poll?: string | undefined;
    context?: string | undefined;
    limit?: string | undefined;
  },
  env: Env,
): AcquireSettings {
  const leaseMs = parseDuration('--lease', values.lease ?? DEFAULT_LEASE);
  const waitMs =
    values.wait === undefined ? leaseMs : parseDuration('--wait', values.wait, { allowZero: true });
  const pollMs = parseDuration('--poll', values.poll ?? DEFAULT_POLL);
  const context = values.context ?? defaultContext(env);
  const limit = values.limit === undefined ? 1 : parseLimit(values.limit);
  const storeSettings = resolveStoreSettings(values, env);
  // The list strategy keeps one object per contender, not one record of all holders: core
  // refuses a limit there, and saying so here, in terms of store URLs, spares a request.
  if (limit > 1 && storeSettings.store.kind === 's3+list') {
    throw new UsageError(
      '--limit above 1 needs s3:// (S3 conditional writes) or dynamodb://; the s3+list:// strategy holds one at a time.',
    );
  }
  return { ...storeSettings, leaseMs, waitMs, pollMs, context, limit };
}
