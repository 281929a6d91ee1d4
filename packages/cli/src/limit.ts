import { UsageError } from './usage-error.js';

/** The most holders core allows on one key. */
export const MAX_LIMIT = 100;

/**
 * `--limit <n>`: how many may hold the lock at once, a whole number from 1 (a plain lock) to
 * MAX_LIMIT. Checked here so a typo is a usage error before any request.
 */
export function parseLimit(text: string): number {
  const limit = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) {
    throw new UsageError(
      `--limit must be a whole number from 1 to ${MAX_LIMIT} (how many may hold the lock at once), got ${JSON.stringify(text)}; e.g. --limit 2.`,
    );
  }
  return limit;
}
