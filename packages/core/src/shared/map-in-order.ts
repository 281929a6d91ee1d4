/**
 * Maps `items` through `map` with at most `concurrency` calls running at once, and yields the
 * results in the order of `items`, leaving out undefined ones. Items are pulled only as a call
 * slot frees up, so a long listing is never read ahead further than `concurrency` items. When
 * the caller stops early (or a call throws), calls still running are left to finish unobserved.
 */
export async function* mapInOrder<T, R>(
  items: AsyncIterable<T> | Iterable<T>,
  concurrency: number,
  map: (item: T) => Promise<R | undefined>,
): AsyncGenerator<R, void, undefined> {
  const source =
    Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : toAsync(items[Symbol.iterator]());
  const running: Promise<R | undefined>[] = [];
  let exhausted = false;
  try {
    for (;;) {
      while (!exhausted && running.length < concurrency) {
        const next = await source.next();
        if (next.done) {
          exhausted = true;
          break;
        }
        const call = map(next.value);
        // Awaited in turn below; until then a failure must not count as unhandled.
        call.catch(() => undefined);
        running.push(call);
      }
      const first = running.shift();
      if (!first) return;
      const result = await first;
      if (result !== undefined) yield result;
    }
  } finally {
    if (!exhausted) await source.return?.();
  }
}

function toAsync<T>(iterator: Iterator<T>): AsyncIterator<T> {
  return {
    next: async () => iterator.next(),
    return: async () => iterator.return?.() ?? { done: true, value: undefined },
  };
}
