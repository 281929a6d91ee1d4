/** One accepted charge of an invoice. */
export interface LedgerEntry {
  invoiceId: string;
  chargeId: string;
  fencingToken: number;
  amountCents: number;
  writer: string;
  at: number;
}

export type LedgerWriteResult =
  | { accepted: true; highestToken: number }
  | { accepted: false; highestToken: number; reason: string };

/**
 * The resource the charges protect: a tiny per-invoice ledger that remembers the highest
 * fencing token it has seen and refuses writes carrying a lower one. This is the check the
 * lock alone cannot give: a write delayed past its lock's lease arrives with an old token.
 */
export class FencedLedger {
  private readonly highest = new Map<string, number>();
  private readonly entries: LedgerEntry[] = [];
  accepted = 0;
  staleRejected = 0;

  write(entry: LedgerEntry): LedgerWriteResult {
    const highest = this.highest.get(entry.invoiceId) ?? 0;
    // Equal tokens are the same holder writing twice; only a lower token is stale.
    if (entry.fencingToken < highest) {
      this.staleRejected++;
      return {
        accepted: false,
        highestToken: highest,
        reason: `stale fencing token ${entry.fencingToken}: invoice ${entry.invoiceId} already saw ${highest}`,
      };
    }
    this.highest.set(entry.invoiceId, entry.fencingToken);
    this.entries.push(entry);
    this.accepted++;
    return { accepted: true, highestToken: entry.fencingToken };
  }

  totalCents(invoiceId: string): number {
    return this.entries.filter((e) => e.invoiceId === invoiceId).reduce((sum, e) => sum + e.amountCents, 0);
  }

  highestToken(invoiceId: string): number {
    return this.highest.get(invoiceId) ?? 0;
  }
}
