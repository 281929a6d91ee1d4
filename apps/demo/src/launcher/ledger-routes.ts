import express, { type Router } from 'express';
import { lockLimit } from '../shared/replica-config.js';
import { FencedLedger, type LedgerWriteResult } from './fenced-ledger.js';
import { SlowNetwork } from './slow-network.js';
import { WorkLog } from './work-log.js';

/** The ledger service the replicas write to: fenced invoice charges plus the work log. */
export class LedgerService {
  readonly ledger = new FencedLedger();
  /** Judged against the limit the demo gives each lock, not what a replica says it used. */
  readonly work = new WorkLog(lockLimit);
  readonly network = new SlowNetwork<LedgerWriteResult>();

  routes(): Router {
    const router = express.Router();
    router.use(express.json());

    router.post('/ledger/work/enter', (req, res) => {
      const { resource, holder, fencingToken } = req.body ?? {};
      if (typeof resource !== 'string' || typeof holder !== 'string' || typeof fencingToken !== 'number') {
        res.status(400).json({ error: 'send { resource: string, holder: string, fencingToken: number }' });
        return;
      }
      const entry = this.work.enter(resource, holder, fencingToken);
      if (!entry) {
        res.status(410).json({ error: `${holder} was declared dead; its work no longer counts` });
        return;
      }
      res.status(201).json({ seq: entry.seq });
    });

    router.post('/ledger/work/leave', (req, res) => {
      const { seq } = req.body ?? {};
      if (typeof seq !== 'number') {
        res.status(400).json({ error: 'send { seq: number } from the enter answer' });
        return;
      }
      this.work.leave(seq);
      res.status(204).end();
    });

    router.post('/ledger/invoices/:id/charges', (req, res) => {
      const invoiceId = req.params.id;
      const { chargeId, fencingToken, amountCents, writer } = req.body ?? {};
      if (
        typeof chargeId !== 'string' ||
        typeof writer !== 'string' ||
        !Number.isInteger(fencingToken) ||
        !Number.isInteger(amountCents)
      ) {
        res.status(400).json({
          error: 'send { chargeId: string, writer: string, fencingToken: integer, amountCents: integer }',
        });
        return;
      }
      const apply = (): LedgerWriteResult => {
        const result = this.ledger.write({
          invoiceId,
          chargeId,
          fencingToken,
          amountCents,
          writer,
          at: Date.now(),
        });
        // Answered even when late: the caller may have given up, as callers on real networks do.
        res.status(result.accepted ? 201 : 409).json(result);
        return result;
      };
      if (!this.network.hold(invoiceId, apply)) apply();
    });

    router.get('/ledger/invoices/:id', (req, res) => {
      res.json({
        invoiceId: req.params.id,
        highestToken: this.ledger.highestToken(req.params.id),
        totalCents: this.ledger.totalCents(req.params.id),
      });
    });
    return router;
  }
}
