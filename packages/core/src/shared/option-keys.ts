import { LockConfigError } from './errors.js';

/**
 * Refuses keys an options object does not know, naming the closest known one: a typo such
 * as `waitMS` would otherwise be ignored and leave its default (for `waitMs`, waiting for
 * ever). `where` names the entry point, e.g. "acquire()". Only the names are checked: a known
 * key whose value is undefined is fine, an unknown one is refused whatever its value. Values
 * that are not plain objects are left to the caller's own checks. `hints` replaces the
 * suggestion for keys that are known mistakes, e.g. `{ waitMs: 'tryAcquire() never waits' }`.
 */
export function checkOptionKeys(
  where: string,
  options: unknown,
  known: readonly string[],
  hints: Readonly<Record<string, string>> = {},
): void {
  if (typeof options !== 'object' || options === null) return;
  // A class instance (e.g. a campaign's callbacks written as a class with fields of its own)
  // is the user's object, not an options literal: only plain objects are checked.
  const proto = Object.getPrototypeOf(options);
  if (proto !== Object.prototype && proto !== null) return;
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    // An acquire-only key left undefined (an AcquireOptions object passed to tryAcquire) asks for nothing.
    if (Object.hasOwn(hints, key) && (options as Record<string, unknown>)[key] === undefined) continue;
    const closest = closestKey(key, known);
    const hint = Object.hasOwn(hints, key)
      ? hints[key]
      : closest === undefined
        ? `the options are ${known.join(', ')}`
        : `did you mean ${closest}?`;
    throw new LockConfigError(`${where}: unknown option ${key}; ${hint}`);
  }
}

/** The known key nearest to `key` by edit distance, ignoring case; undefined when none is near. */
function closestKey(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // Beyond a third of the key's length the "closest" key is a guess, not a likely typo.
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
