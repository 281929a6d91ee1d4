import { LockConfigError } from '../shared/errors.js';
import { describe } from '../shared/validation.js';

/** Attributes a caller adds to the spans of one acquisition (an adapter's route, job or handler). */
export type SpanAttributes = Record<string, string | number | boolean>;

/** More than this many is a mistake (a whole request object passed in), not context. */
const MAX_ATTRIBUTES = 32;

/** Checks the `attributes` acquire option: a plain object of string, finite number or boolean values. */
export function checkSpanAttributes(value: unknown): SpanAttributes | undefined {
  if (value === undefined) return undefined;
  const proto = typeof value === 'object' && value !== null ? Object.getPrototypeOf(value) : undefined;
  if (proto !== Object.prototype && proto !== null) {
    throw new LockConfigError(
      `attributes must be a plain object of span attributes, such as { 'http.route': '/orders/:id' }, got ${describe(value)}.`,
    );
  }
  const entries = Object.entries(value as object);
  if (entries.length > MAX_ATTRIBUTES) {
    throw new LockConfigError(
      `attributes has ${entries.length} entries; at most ${MAX_ATTRIBUTES} are recorded on a span.`,
    );
  }
  for (const [name, attribute] of entries) {
    if (name.length === 0) throw new LockConfigError('attributes: an attribute name must not be empty.');
    const ok =
      typeof attribute === 'string' ||
      typeof attribute === 'boolean' ||
      (typeof attribute === 'number' && Number.isFinite(attribute));
    if (!ok) {
      throw new LockConfigError(
        `attributes.${name} must be a string, a finite number or a boolean, got ${describe(attribute)}.`,
      );
    }
  }
  return value as SpanAttributes;
}
