/**
 * The forceReleases a client has on their way, key by key. A forceRelease may land before or
 * after a request of this client's own leases, and neither answer says which: while one is on
 * its way, the leases of its key trust nothing their writes confirm (`StoreLease.forceReleasing`),
 * and the key's poller sends no claim (it would only win a lease to give back).
 */
export class ForceReleases {
  /** Only keys with a forceRelease on its way. */
  private readonly keys = new Map<string, number>();

  /** A forceRelease of `key` begins; call the function returned once it is answered (or failed). */
  begin(key: string): () => void {
    this.keys.set(key, (this.keys.get(key) ?? 0) + 1);
    return () => {
      const left = (this.keys.get(key) ?? 1) - 1;
      if (left > 0) this.keys.set(key, left);
      else this.keys.delete(key);
    };
  }

  /** A forceRelease of `key` by this client is on its way. */
  forcing(key: string): boolean {
    return this.keys.has(key);
  }
}
