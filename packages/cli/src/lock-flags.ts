import type { Env } from './aws-settings.js';
import { parseDuration } from './duration.js';
import { defaultContext, defaultLockName } from './github-defaults.js';
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

/** Lease, wait, poll and context, with their defaults: --wait defaults to the lease. */
export function resolveAcquireSettings(
  values: {
    store?: string | undefined;
    name?: string | undefined;
    lease?: string | undefined;
    wait?: string | undefined;
    poll?: string | undefined;
    context?: string | undefined;
  },
  env: Env,
): AcquireSettings {
  const leaseMs = parseDuration('--lease', values.lease ?? DEFAULT_LEASE);
  const waitMs =
    values.wait === undefined ? leaseMs : parseDuration('--wait', values.wait, { allowZero: true });
  const pollMs = parseDuration('--poll', values.poll ?? DEFAULT_POLL);
  const context = values.context ?? defaultContext(env);
  return { ...resolveStoreSettings(values, env), leaseMs, waitMs, pollMs, context };
}
