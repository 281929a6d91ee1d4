import { describe, expect, test } from 'vitest';
import { FencedLedger } from '../src/launcher/fenced-ledger.js';
import { SlowNetwork } from '../src/launcher/slow-network.js';

const charge = (invoiceId: string, fencingToken: number) => ({
  invoiceId,
  fencingToken,
  chargeId: `c${fencingToken}`,
  amountCents: 100,
  writer: 'replica-1',
  at: 0,
});

describe('fenced ledger', () => {
  test('refuses a token lower than the highest it has seen for the invoice, and counts it', () => {
    const ledger = new FencedLedger();
    expect(ledger.write(charge('A', 1))).toEqual({ accepted: true, highestToken: 1 });
    expect(ledger.write(charge('A', 3))).toEqual({ accepted: true, highestToken: 3 });
    expect(ledger.write(charge('A', 2))).toMatchObject({ accepted: false, highestToken: 3 });
    expect(ledger.write(charge('A', 3)).accepted).toBe(true); // the same holder may write twice
    expect(ledger.write(charge('B', 1)).accepted).toBe(true); // invoices are fenced separately
    expect(ledger.staleRejected).toBe(1);
    expect(ledger.totalCents('A')).toBe(300);
  });

  test('writes held by the slow network arrive after newer ones and are refused', () => {
    const ledger = new FencedLedger();
    const network = new SlowNetwork<ReturnType<FencedLedger['write']>>();
    network.holdNext(['A'], 1);
    expect(network.hold('A', () => ledger.write(charge('A', 1)))).toBe(true);
    expect(network.hold('A', () => ledger.write(charge('A', 2)))).toBe(false);
    ledger.write(charge('A', 2));
    expect(network.deliverAll()).toEqual([expect.objectContaining({ accepted: false, highestToken: 2 })]);
    expect(ledger.staleRejected).toBe(1);
  });
});
