/**
 * What fencing tokens protect: a resource per key that accepts a write only when its token
 * is at least the highest it has seen. Writes here are instant, so a refused write means that
 * another holder with a higher token wrote while this one still believed it held the lock.
 */
export class FencedResource {
  private readonly highest = new Map<string, number>();
  accepted = 0;
  refused = 0;

  /** True when accepted. */
  write(key: string, token: number): boolean {
    const highest = this.highest.get(key) ?? 0;
    if (token < highest) {
      this.refused++;
      return false;
    }
    this.highest.set(key, token);
    this.accepted++;
    return true;
  }

  highestOf(key: string): number {
    return this.highest.get(key) ?? 0;
  }
}
