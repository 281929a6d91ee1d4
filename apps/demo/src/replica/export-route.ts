import type { LockClient } from '@latch/core';
import { lockErrorToHttp } from '@latch/core/http';
import express, { type Router } from 'express';
import { EXPORT_LIMIT, exportKey } from '../shared/replica-config.js';
import type { LedgerClient } from './ledger-client.js';

/** Stand-in for building a customer's data export. */
const EXPORT_WORK_MS = 1_200;

/**
 * `POST /customers/:id/exports`: exports are heavy, so at most EXPORT_LIMIT of one customer
 * run at once across all replicas (core's withLock with `limit`); the others wait for a place.
 * Each holder has its own lease and fencing token. Answers 201 when the export ran, and core's
 * HTTP answer (429 Too Many Requests under a limit) when no place freed within the wait.
 */
export function exportRoute(locks: LockClient, ledger: LedgerClient): Router {
  const router = express.Router();
  router.post('/customers/:id/exports', async (req, res) => {
    const customerId = req.params.id;
    const key = exportKey(customerId);
    try {
      const fencingToken = await locks.withLock(
        key,
        async (lock) => {
          await ledger.during(
            key,
            lock.fencingToken,
            () => new Promise((r) => setTimeout(r, EXPORT_WORK_MS)),
          );
          return lock.fencingToken;
        },
        { limit: EXPORT_LIMIT, waitMs: 60_000, context: `export of ${customerId}` },
      );
      res.status(201).json({ customerId, key, fencingToken });
    } catch (error) {
      const answer = lockErrorToHttp(error);
      if (!answer) throw error;
      res.status(answer.status).set(answer.headers).json(answer.body);
    }
  });
  return router;
}
