/** A latency distribution given by its median and 99th percentile, in ms. */
export interface LatencyShape {
  p50Ms: number;
  p99Ms: number;
}

/** The standard normal's 99th percentile. */
const Z99 = 2.326_347_874;

/**
 * Samples a log-normal distribution with the given median and 99th percentile: most requests
 * near the median, a long tail to the right, never negative. `random` yields uniform numbers
 * in [0, 1) (seededRandom, for reproducible runs); two are drawn per sample (Box-Muller).
 */
export function latencySampler(shape: LatencyShape, random: () => number): () => number {
  if (!(shape.p50Ms > 0) || !(shape.p99Ms >= shape.p50Ms)) {
    throw new Error(`A latency shape needs 0 < p50 <= p99, got p50 ${shape.p50Ms}, p99 ${shape.p99Ms}.`);
  }
  const mu = Math.log(shape.p50Ms);
  const sigma = Math.log(shape.p99Ms / shape.p50Ms) / Z99;
  return () => {
    const u1 = 1 - random(); // (0, 1]: log(u1) is finite
    const u2 = random();
    const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    return Math.exp(mu + sigma * z);
  };
}
