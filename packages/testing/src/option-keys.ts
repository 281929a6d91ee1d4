/**
 * Refuses keys an options object does not know, naming the closest known one, so that a typo
 * (`bukcet`, `startupTimeoutMS`) fails at once instead of leaving its default. The same rule as
 * @latch/core's checkOptionKeys, written here because this package does not depend on core:
 * it throws a TypeError. `where` names the function, e.g. "startRedis()".
 */
export function checkOptionKeys(where: string, options: unknown, known: readonly string[]): void {
  if (typeof options !== 'object' || options === null) return;
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const closest = closestKey(key, known);
    const hint = closest === undefined ? `the options are ${known.join(', ')}` : `did you mean ${closest}?`;
    throw new TypeError(`${where}: unknown option ${key}; ${hint}`);
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
