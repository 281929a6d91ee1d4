/**
 * What fencing tokens protect: a resource per key that accepts a write only when its token
 * is at least the highest it has seen. Writes here are instant, so a refused write means that
 * another holder with a higher token wrote while this one still believed it held the lock.
 *
 * A semaphore's resource cannot order its writers by token: several hold at once, and a holder
 * with a later token may write and leave before one with an earlier token writes. Tokens order
 * a semaphore's holders; they do not count them. So a semaphore's resource admits a write
 * while at most `limit` holders are live at that instant (`admit`), as the checker counts them.
 */
export class FencedResource {
  private readonly highest = new Map<string, number>();
  accepted = 0;
  refused = 0;

  /** A lock's write: true when accepted. */
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

  /** A semaphore's write, made while `liveHolders` hold its key: true when accepted. */
  admit(liveHolders: number, limit: number): boolean {
    if (liveHolders > limit) {
      this.refused++;
      return false;
    }
    this.accepted++;
    return true;
  }

  highestOf(key: string): number {
    return this.highest.get(key) ?? 0;
  }
}
