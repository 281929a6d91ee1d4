/** A write the network is sitting on. */
interface HeldWrite<R> {
  invoiceId: string;
  apply: () => R;
}

/**
 * The network between the replicas and the ledger, made slow on purpose during a burst: the
 * first writes to each invoice are held back and delivered only when the burst is over, long
 * after their charges gave up waiting and released the lock. That is the case fencing tokens
 * exist for: a write from an old holder arriving after a newer holder's write.
 */
export class SlowNetwork<R> {
  private readonly toHold = new Map<string, number>();
  private held: Array<HeldWrite<R>> = [];

  /** The next `count` writes to each of `invoiceIds` will be held. */
  holdNext(invoiceIds: string[], count: number): void {
    for (const id of invoiceIds) this.toHold.set(id, count);
  }

  /** Holds the write if it is one of those; returns false when it may go through now. */
  hold(invoiceId: string, apply: () => R): boolean {
    const remaining = this.toHold.get(invoiceId) ?? 0;
    if (remaining === 0) return false;
    this.toHold.set(invoiceId, remaining - 1);
    this.held.push({ invoiceId, apply });
    return true;
  }

  /** Delivers every held write, in the order they were sent, and stops holding. */
  deliverAll(): R[] {
    this.toHold.clear();
    const held = this.held;
    this.held = [];
    return held.map((write) => write.apply());
  }
}
