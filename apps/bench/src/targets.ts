import type { BenchResults, TargetCheck } from './results.js';
import { round } from './stats.js';
import { SUBJECTS } from './subjects/catalog.js';

/**
 * The targets, checked against a run and reported (never asserted in tests):
 * uncontended cycles at the request floor, and at least twice the hand-off rate of the best
 * DynamoDB peer on the same DynamoDB Local.
 */
export function checkTargets(scenarios: BenchResults['scenarios']): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const [subject, name] of [
    ['latch-dynamodb', 'DynamoDB requests per uncontended cycle'],
    ['latch-s3', 'S3 requests per uncontended cycle (new key, so the ETag is known)'],
  ] as const) {
    const row = scenarios.uncontended?.find((r) => r.subject === subject);
    if (row?.status !== 'ok' || row.requestsPerCycle === undefined) continue;
    checks.push({
      name,
      target: '2 (the floor: one conditional write to acquire, one to release)',
      measured: String(row.requestsPerCycle),
      met: row.requestsPerCycle <= 2,
    });
  }
  const ours = scenarios.handoff?.find((r) => r.subject === 'latch-dynamodb');
  const peerIds = new Set(SUBJECTS.filter((s) => !s.ours && s.backend === 'dynamodb').map((s) => s.id));
  const peers = (scenarios.handoff ?? []).filter((r) => peerIds.has(r.subject) && r.status === 'ok');
  if (ours?.status === 'ok' && ours.handoffsPerSec !== undefined && peers.length > 0) {
    const best = peers.reduce((a, b) => ((b.handoffsPerSec ?? 0) > (a.handoffsPerSec ?? 0) ? b : a));
    const bestRate = best.handoffsPerSec ?? 0;
    const ratio = bestRate > 0 ? ours.handoffsPerSec / bestRate : Number.POSITIVE_INFINITY;
    checks.push({
      name: 'Hand-off rate on DynamoDB Local vs the best DynamoDB peer',
      target: '>= 2x',
      measured: `${round(ratio)}x (${ours.handoffsPerSec}/s vs ${bestRate}/s for ${best.subject})`,
      met: ratio >= 2,
    });
  }
  return checks;
}
