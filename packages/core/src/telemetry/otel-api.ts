import type * as OtelApi from '@opentelemetry/api';
import { ownRequire } from './own-require.js';

export type { OtelApi };

/** Not tried yet, loaded, or known to be absent (then never tried again). */
let api: typeof OtelApi | null | undefined;

/**
 * @opentelemetry/api, or undefined when it is not installed. An optional peer dependency:
 * loaded on the first LockClient that wants telemetry, synchronously (a constructor cannot
 * await), once per process. Its globals live on `globalThis`, so this copy sees the providers
 * the application registered through its own import of the package.
 */
export function loadOtelApi(): typeof OtelApi | undefined {
  if (api === undefined) {
    try {
      api = ownRequire('@opentelemetry/api') as typeof OtelApi;
    } catch {
      api = null; // not installed (or unloadable): telemetry stays off
    }
  }
  return api ?? undefined;
}

/** This package's version, for the tracer and meter; undefined when it cannot be read. */
export function latchVersion(): string | undefined {
  try {
    return (ownRequire('@latch/core/package.json') as { version?: string }).version;
  } catch {
    return undefined;
  }
}
