export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls until `condition` holds; generous by default, because other test runs share the machine. */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** Counts how many callers are inside a section at once; `max` > 1 means two overlapped. */
export class Overlap {
  private inside = 0;
  max = 0;
  runs = 0;

  async run<R>(fn: () => Promise<R> | R): Promise<R> {
    this.inside += 1;
    this.runs += 1;
    this.max = Math.max(this.max, this.inside);
    try {
      return await fn();
    } finally {
      this.inside -= 1;
    }
  }
}
