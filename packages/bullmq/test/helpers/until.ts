/** Polls `condition` until it returns a truthy value (returned), or fails after `timeoutMs`. */
export async function until<T>(
  what: string,
  condition: () => T | Promise<T>,
  timeoutMs = 30_000,
): Promise<NonNullable<T>> {
  const started = Date.now();
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (Date.now() - started > timeoutMs)
      throw new Error(`Timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
