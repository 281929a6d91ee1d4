/**
 * Seeded pseudo-random numbers (sfc32). The simulator never touches Math.random: every choice
 * (workload, faults, latencies, client jitter) comes from a stream derived from the seed, so a
 * seed replays byte for byte. Independent streams per concern keep one concern's extra draws
 * (say, a new kind of fault) from shifting every other choice of the run.
 */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, label = '') {
    // splitmix32 spreads (seed, label) over the four words of state.
    let x = (seed ^ hashLabel(label)) >>> 0;
    const next = () => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.next();
  }

  /** Uniform in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** Uniform real in [lo, hi). */
  real(lo: number, hi: number): number {
    return lo + this.next() * (hi - lo);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Picks a key of `weights` with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    let total = 0;
    for (const k in weights) total += weights[k];
    let r = this.next() * total;
    let last: K | undefined;
    for (const k in weights) {
      last = k;
      r -= weights[k];
      if (r < 0) return k;
    }
    return last!;
  }

  /** Exponentially distributed with the given mean (gaps of a Poisson process). */
  exp(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }
}

function hashLabel(label: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
