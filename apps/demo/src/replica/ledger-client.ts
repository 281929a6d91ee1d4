/** What the ledger said about one charge. */
export type ChargeOutcome =
  | { status: 'accepted'; highestToken: number }
  | { status: 'stale'; highestToken: number; reason: string }
  | { status: 'timed-out' };

/** How long a charge waits for the ledger before giving up (the write may still land later). */
const LEDGER_WRITE_TIMEOUT_MS = 1_000;

/**
 * The replicas' side of the ledger the launcher serves: fenced invoice writes, and the work
 * log that reports when a holder starts and stops working under a lock (the overlap check).
 */
export class LedgerClient {
  constructor(
    private readonly baseUrl: string,
    /** This process's lock owner id: the work log knows it as the holder. */
    private readonly holder: string,
  ) {}

  /** Runs `work` between an "enter" and a "leave" in the work log. */
  async during<T>(resource: string, fencingToken: number, work: () => Promise<T>): Promise<T> {
    const entered = await this.post('/ledger/work/enter', { resource, holder: this.holder, fencingToken });
    const { seq } = (await entered.json()) as { seq: number };
    try {
      return await work();
    } finally {
      await this.post('/ledger/work/leave', { seq });
    }
  }

  /**
   * Writes a charge with its fencing token. Gives up after a second (or when `signal`, the
   * lock's, aborts); the request may still reach the ledger afterwards, as on a real network.
   */
  async charge(
    invoiceId: string,
    charge: { chargeId: string; fencingToken: number; amountCents: number },
    signal: AbortSignal,
  ): Promise<ChargeOutcome> {
    const timeout = AbortSignal.timeout(LEDGER_WRITE_TIMEOUT_MS);
    try {
      const response = await this.post(
        `/ledger/invoices/${encodeURIComponent(invoiceId)}/charges`,
        { ...charge, writer: this.holder },
        AbortSignal.any([signal, timeout]),
        [201, 409],
      );
      const body = (await response.json()) as { highestToken: number; reason?: string };
      return response.status === 201
        ? { status: 'accepted', highestToken: body.highestToken }
        : { status: 'stale', highestToken: body.highestToken, reason: body.reason ?? 'stale token' };
    } catch (error) {
      if (timeout.aborted) return { status: 'timed-out' };
      throw error;
    }
  }

  private async post(
    path: string,
    body: unknown,
    signal?: AbortSignal,
    expected: number[] = [200, 201, 204],
  ): Promise<Response> {
    const response = await fetch(new URL(path, this.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: signal ?? null,
    });
    if (!expected.includes(response.status)) {
      throw new Error(`ledger answered ${response.status} to ${path}: ${await response.text()}`);
    }
    return response;
  }
}
