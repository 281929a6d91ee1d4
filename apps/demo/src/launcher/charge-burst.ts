import type { LedgerService } from './ledger-routes.js';
import type { ReplicaState } from './replica-supervisor.js';

export const BURST_SIZE = 20;
export const BURST_INVOICES = ['INV-1001', 'INV-1002'];
/** Writes per invoice the slow network holds back in each burst. */
const HELD_WRITES_PER_INVOICE = 2;
const CHARGE_TIMEOUT_MS = 90_000;

/** The check shown after a burst. */
export interface BurstResult {
  kind: 'burst';
  number: number;
  charges: number;
  invoices: string[];
  /** Answers: 201 accepted, 504 ledger too slow (write held back), anything else failed. */
  accepted: number;
  timedOut: number;
  failed: number;
  /** Held-back writes delivered after the burst: refused for a stale token, or taken. */
  lateWrites: number;
  staleRejected: number;
  lateAccepted: number;
  /** Work log: stretches of work under the invoice locks, and overlaps among them. */
  workEntries: number;
  overlaps: number;
  overlapDetails: string[];
  highestTokens: Record<string, number>;
  passed: boolean;
  finishedAt: number;
}

/**
 * Fires BURST_SIZE charges at once, spread over the replicas and two invoices, with the
 * network holding back the first writes to each invoice; then delivers those late writes and
 * reads the verdict from the ledger and the work log.
 */
export async function runChargeBurst(
  number: number,
  replicas: Array<ReplicaState & { port: number }>,
  service: LedgerService,
): Promise<BurstResult> {
  const mark = service.work.mark();
  service.network.holdNext(BURST_INVOICES, HELD_WRITES_PER_INVOICE);
  const answers = await Promise.all(
    Array.from({ length: BURST_SIZE }, (_, i) => {
      const replica = replicas[i % replicas.length]!;
      const invoiceId = BURST_INVOICES[i % BURST_INVOICES.length]!;
      return fetch(`http://127.0.0.1:${replica.port}/invoices/${invoiceId}/charge`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ chargeId: `burst-${number}-${i + 1}`, amountCents: 1250 }),
        signal: AbortSignal.timeout(CHARGE_TIMEOUT_MS),
      }).then(
        async (response) => {
          await response.arrayBuffer();
          return response.status;
        },
        () => 0,
      );
    }),
  );
  const late = service.network.deliverAll();
  const work = service.work.summary(mark, (resource) => resource.startsWith('invoice/'));
  return {
    kind: 'burst',
    number,
    charges: BURST_SIZE,
    invoices: BURST_INVOICES,
    accepted: answers.filter((s) => s === 201).length,
    timedOut: answers.filter((s) => s === 504).length,
    failed: answers.filter((s) => s !== 201 && s !== 504).length,
    lateWrites: late.length,
    staleRejected: late.filter((r) => !r.accepted).length,
    lateAccepted: late.filter((r) => r.accepted).length,
    workEntries: work.entries,
    overlaps: work.overlaps.length,
    overlapDetails: work.overlaps.map(
      (o) =>
        `${o.resource}: ${o.second.holder} (token ${o.second.fencingToken}) entered while ${o.first.holder} (token ${o.first.fencingToken}) was inside`,
    ),
    highestTokens: Object.fromEntries(BURST_INVOICES.map((id) => [id, service.ledger.highestToken(id)])),
    passed: work.overlaps.length === 0,
    finishedAt: Date.now(),
  };
}
