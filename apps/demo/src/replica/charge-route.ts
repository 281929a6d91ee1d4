import type { LockClient } from '@latch/core';
import { lock } from '@latch/express';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { LedgerClient } from './ledger-client.js';

/** Stand-in for the payment provider call a real charge would make under the lock. */
const PAYMENT_PROVIDER_MS = 40;

/**
 * `POST /invoices/:id/charge`: charges of one invoice run one at a time across all replicas
 * (lock() from @latch/express), and each writes to the ledger with its fencing token.
 * Answers 201 when the ledger took the charge, 409 when it refused a stale token, and 504 when
 * the ledger did not answer in time (the write may still land later, and then be refused).
 */
export function chargeRoute(locks: LockClient, ledger: LedgerClient): Router {
  const router = express.Router();
  router.post(
    '/invoices/:id/charge',
    express.json(),
    checkCharge,
    lock({ client: locks, name: 'invoice', key: (req) => req.params.id as string, waitMs: 60_000 }),
    async (req, res) => {
      const invoiceId = req.params.id as string;
      const { chargeId, amountCents } = res.locals.charge as { chargeId: string; amountCents: number };
      const { fencingToken, signal, key } = req.lock!;
      const outcome = await ledger.during(key, fencingToken, async () => {
        await new Promise((resolve) => setTimeout(resolve, PAYMENT_PROVIDER_MS));
        return ledger.charge(invoiceId, { chargeId, fencingToken, amountCents }, signal);
      });
      const status = outcome.status === 'accepted' ? 201 : outcome.status === 'stale' ? 409 : 504;
      res.status(status).json({ invoiceId, chargeId, fencingToken, ...outcome });
    },
  );
  return router;
}

/** Bad input is answered before any lock is taken. */
function checkCharge(req: Request, res: Response, next: NextFunction): void {
  const { chargeId = 'manual', amountCents = 1250 } = req.body ?? {};
  if (typeof chargeId !== 'string' || !Number.isInteger(amountCents) || amountCents <= 0) {
    res.status(400).json({ error: 'send { "chargeId"?: string, "amountCents"?: positive integer }' });
    return;
  }
  res.locals.charge = { chargeId, amountCents };
  next();
}
