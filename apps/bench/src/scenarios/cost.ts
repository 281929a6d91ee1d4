import { dollarsFor, dollarsPerMillion } from '../cost.js';
import type { CostRow, HandoffRow, RenewalRow, UncontendedRow } from '../results.js';
import type { SubjectInfo } from '../subjects/catalog.js';

const MINUTES_PER_MONTH = 30 * 24 * 60;

/**
 * Scenario 5: what the counted requests of scenarios 1, 2 and 4 cost at AWS list prices
 * (prices.ts). Nothing is run here. Redis has no per-request price (null).
 */
export function computeCost(
  subjects: readonly SubjectInfo[],
  found: { uncontended?: UncontendedRow[]; handoff?: HandoffRow[]; renewal?: RenewalRow[] },
): CostRow[] {
  return subjects.map((subject) => {
    const uncontended = found.uncontended?.find((row) => row.subject === subject.id);
    const handoff = found.handoff?.find((row) => row.subject === subject.id);
    const renewal = found.renewal?.find((row) => row.subject === subject.id);
    const row: CostRow = { subject: subject.id, status: 'ok' };
    if (uncontended?.status === 'ok' && uncontended.requests && uncontended.cycles) {
      row.usdPerMillionCycles = dollarsPerMillion(
        subject.backend,
        uncontended.requests.byOp,
        uncontended.cycles,
      );
    }
    if (handoff?.status === 'ok' && handoff.requests && handoff.handoffs) {
      row.usdPerMillionHandoffs = dollarsPerMillion(subject.backend, handoff.requests.byOp, handoff.handoffs);
    }
    if (renewal?.status === 'ok' && renewal.perMinuteByOp) {
      const perMinute = dollarsFor(subject.backend, renewal.perMinuteByOp);
      row.usdPerMonthHolding100 = perMinute === null ? null : perMinute * MINUTES_PER_MONTH;
    }
    const anyMeasured = [uncontended, handoff, renewal].some((r) => r?.status === 'ok');
    if (!anyMeasured) {
      row.status = [uncontended, handoff].find((r) => r)?.status ?? 'not-applicable';
      row.note = 'nothing measured to price';
    } else if (subject.backend === 'redis') {
      row.note = 'self-hosted Redis has no per-request price';
    }
    return row;
  });
}
