/**
 * The run's recent history: operations, requests and faults with virtual time, process and
 * key. A ring buffer, so tracing costs the same whether a run lasts a second or an hour; a
 * violation prints its tail. `hash` folds every entry ever added, so two runs of one seed can
 * be compared byte for byte without keeping their whole traces.
 */
export class Trace {
  private readonly entries: string[];
  private next = 0;
  private count = 0;
  private h1 = 0x811c9dc5;
  private h2 = 0x12345678;

  constructor(
    capacity: number,
    private readonly hashing: boolean,
    private readonly echo?: (line: string) => void,
  ) {
    this.entries = new Array(capacity);
  }

  add(at: number, who: string, key: string, what: string): void {
    const line = `${at.toFixed(3).padStart(11)} ${who.padEnd(6)} ${key.padEnd(3)} ${what}`;
    this.entries[this.next] = line;
    this.next = (this.next + 1) % this.entries.length;
    this.count++;
    if (this.hashing) {
      for (let i = 0; i < line.length; i++) {
        const c = line.charCodeAt(i);
        this.h1 = Math.imul(this.h1 ^ c, 0x01000193);
        this.h2 = Math.imul(this.h2 ^ c, 0x5bd1e995) ^ (this.h2 >>> 15);
      }
    }
    this.echo?.(line);
  }

  get size(): number {
    return this.count;
  }

  /** Hex digest of every entry added so far (only when hashing). */
  get hash(): string {
    return `${(this.h1 >>> 0).toString(16).padStart(8, '0')}${(this.h2 >>> 0).toString(16).padStart(8, '0')}`;
  }

  /** The last `n` entries, oldest first. */
  tail(n: number): string[] {
    const keep = Math.min(n, this.count, this.entries.length);
    const out: string[] = [];
    for (let i = keep; i > 0; i--) {
      const index = (this.next - i + this.entries.length) % this.entries.length;
      out.push(this.entries[index]!);
    }
    return out;
  }
}
