import { EXPORT_LIMIT, exportKey } from '../shared/replica-config.js';
import type { LedgerService } from './ledger-routes.js';
import type { ReplicaState } from './replica-supervisor.js';

export const EXPORT_COUNT = 8;
export const EXPORT_CUSTOMER = 'acme';
const EXPORT_TIMEOUT_MS = 90_000;

/** The check shown after a run of exports. */
export interface ExportRunResult {
  kind: 'exports';
  number: number;
  exports: number;
  customer: string;
  key: string;
  limit: number;
  /** Answers: 201 exported; anything else failed (429 when no place freed in time). */
  completed: number;
  failed: number;
  /** Work log: exports run under the lock, the most at once, and how often more than the limit were in. */
  workEntries: number;
  peak: number;
  overlaps: number;
  overlapDetails: string[];
  fencingTokens: number[];
  passed: boolean;
  finishedAt: number;
}

/**
 * Asks for EXPORT_COUNT exports of one customer at once, spread over the replicas: at most
 * EXPORT_LIMIT may run together, the others wait for a place. The verdict comes from the work
 * log, which counts who was inside the customer's export at once.
 */
export async function runExports(
  number: number,
  replicas: Array<ReplicaState & { port: number }>,
  service: LedgerService,
): Promise<ExportRunResult> {
  const mark = service.work.mark();
  const key = exportKey(EXPORT_CUSTOMER);
  const answers = await Promise.all(
    Array.from({ length: EXPORT_COUNT }, (_, i) => {
      const replica = replicas[i % replicas.length]!;
      return fetch(`http://127.0.0.1:${replica.port}/customers/${EXPORT_CUSTOMER}/exports`, {
        method: 'POST',
        signal: AbortSignal.timeout(EXPORT_TIMEOUT_MS),
      }).then(
        async (response) => {
          const body = (await response.json().catch(() => ({}))) as { fencingToken?: number };
          return { status: response.status, fencingToken: body.fencingToken };
        },
        () => ({ status: 0, fencingToken: undefined }),
      );
    }),
  );
  const work = service.work.summary(mark, (resource) => resource === key);
  const completed = answers.filter((a) => a.status === 201).length;
  return {
    kind: 'exports',
    number,
    exports: EXPORT_COUNT,
    customer: EXPORT_CUSTOMER,
    key,
    limit: EXPORT_LIMIT,
    completed,
    failed: EXPORT_COUNT - completed,
    workEntries: work.entries,
    peak: work.peak,
    overlaps: work.overlaps.length,
    overlapDetails: work.overlaps.map(
      (o) =>
        `${o.resource}: ${o.second.holder} (token ${o.second.fencingToken}) entered beside ${o.first.holder} (token ${o.first.fencingToken}) with all ${EXPORT_LIMIT} places taken`,
    ),
    fencingTokens: answers
      .flatMap((a) => (a.fencingToken === undefined ? [] : [a.fencingToken]))
      .sort((a, b) => a - b),
    passed: work.overlaps.length === 0 && completed === EXPORT_COUNT,
    finishedAt: Date.now(),
  };
}
