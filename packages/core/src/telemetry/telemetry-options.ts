import { LockConfigError } from '../shared/errors.js';
import { checkOptionKeys } from '../shared/option-keys.js';
import { describe } from '../shared/validation.js';

/**
 * OpenTelemetry settings of a LockClient (its `telemetry` option). Telemetry goes through
 * `@opentelemetry/api` when it is installed, to the providers the application registered
 * globally unless others are given here; without the package nothing is recorded or loaded.
 */
export interface TelemetryOptions {
  /**
   * What spans record as `latch.lock.key`: the key itself (default), a label made from it, or
   * nothing (false), for keys that carry personal data. Metrics carry no key by default; when
   * this is a function its result is added to every lock metric too, so it must map keys to
   * a small set of labels (e.g. `(key) => key.split(':')[0]`).
   */
  keyLabel?: ((key: string) => string) | false;
  /** Where spans go (default: the global tracer provider of @opentelemetry/api). */
  tracerProvider?: { getTracer(name: string, version?: string): unknown };
  /** Where metrics go (default: the global meter provider of @opentelemetry/api). */
  meterProvider?: { getMeter(name: string, version?: string): unknown };
}

const TELEMETRY_OPTIONS: Record<keyof TelemetryOptions, true> = {
  keyLabel: true,
  tracerProvider: true,
  meterProvider: true,
};
const TELEMETRY_OPTION_KEYS = Object.keys(TELEMETRY_OPTIONS);

/** Checks the `telemetry` client option; false turns telemetry off. */
export function checkTelemetryOptions(value: unknown): TelemetryOptions | false {
  if (value === undefined) return {};
  if (value === false) return false;
  if (typeof value !== 'object' || value === null) {
    throw new LockConfigError(`telemetry must be an options object or false (off), got ${describe(value)}.`);
  }
  checkOptionKeys('new LockClient({ telemetry })', value, TELEMETRY_OPTION_KEYS);
  const options = value as TelemetryOptions;
  if (
    options.keyLabel !== undefined &&
    options.keyLabel !== false &&
    typeof options.keyLabel !== 'function'
  ) {
    throw new LockConfigError(
      `telemetry.keyLabel must be a function from key to label, or false to record no key, got ${describe(options.keyLabel)}.`,
    );
  }
  if (options.tracerProvider !== undefined && typeof options.tracerProvider?.getTracer !== 'function') {
    throw new LockConfigError(
      `telemetry.tracerProvider must be an OpenTelemetry TracerProvider (with getTracer), got ${describe(options.tracerProvider)}.`,
    );
  }
  if (options.meterProvider !== undefined && typeof options.meterProvider?.getMeter !== 'function') {
    throw new LockConfigError(
      `telemetry.meterProvider must be an OpenTelemetry MeterProvider (with getMeter), got ${describe(options.meterProvider)}.`,
    );
  }
  return options;
}
