import type { BenchResults, HandoffRow, TargetCheck } from './results.js';
import { round } from './stats.js';
import { SUBJECTS } from './subjects/catalog.js';

/**
 * The issues' targets, checked against a run and reported (never asserted in tests):
 * uncontended cycles at the request floor; in one client, hand-offs near the physical limit
 * with no store request; across processes, at least twice the hand-off rate of the best peer
 * on the same backend with a p99 wait no worse than the best peer's.
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
  const handoff = scenarios.handoff ?? [];
  const inProcess = handoff.find((r) => r.subject === 'latch-memory' && r.status === 'ok');
  if (inProcess?.handoffsPerSec !== undefined && inProcess.physicalLimitPerSec !== undefined) {
    const share = inProcess.handoffsPerSec / inProcess.physicalLimitPerSec;
    const requests = inProcess.requestsPerHandoff ?? Number.NaN;
    checks.push({
      name: 'Hand-offs in one client: share of the physical limit, store requests per hand-off',
      target: '>= 90%, ~0 (< 0.05)',
      measured: `${round(share * 100)}%, ${requests}`,
      met: share >= 0.9 && requests < 0.05,
    });
  }
  for (const backend of ['dynamodb', 's3'] as const) checks.push(...acrossProcesses(handoff, backend));
  return checks;
}

/** Latch on `backend` against its valid peers there: rate at least 2x the best, p99 wait no worse than the best. */
function acrossProcesses(handoff: readonly HandoffRow[], backend: 'dynamodb' | 's3'): TargetCheck[] {
  const ours = handoff.find((r) => r.subject === `latch-${backend}` && r.status === 'ok');
  const peerIds = new Set(SUBJECTS.filter((s) => !s.ours && s.backend === backend).map((s) => s.id));
  const peers = handoff.filter((r) => peerIds.has(r.subject) && r.status === 'ok');
  if (ours?.handoffsPerSec === undefined || peers.length === 0) return [];
  const where = backend === 'dynamodb' ? 'DynamoDB Local' : 'the local S3 server';
  const checks: TargetCheck[] = [];
  const fastest = peers.reduce((a, b) => ((b.handoffsPerSec ?? 0) > (a.handoffsPerSec ?? 0) ? b : a));
  const bestRate = fastest.handoffsPerSec ?? 0;
  const ratio = bestRate > 0 ? ours.handoffsPerSec / bestRate : Number.POSITIVE_INFINITY;
  checks.push({
    name: `Hand-off rate on ${where} vs the best ${backend === 'dynamodb' ? 'DynamoDB' : 'S3'} peer`,
    target: '>= 2x',
    measured: `${round(ratio)}x (${ours.handoffsPerSec}/s vs ${bestRate}/s for ${fastest.subject})`,
    met: ratio >= 2,
  });
  const timed = peers.filter((r) => r.p99WaitMs !== undefined && Number.isFinite(r.p99WaitMs));
  if (ours.p99WaitMs !== undefined && timed.length > 0) {
    const shortest = timed.reduce((a, b) => ((b.p99WaitMs ?? 0) < (a.p99WaitMs ?? 0) ? b : a));
    checks.push({
      name: `p99 wait on ${where} vs the best peer's`,
      target: 'no worse',
      measured: `${ours.p99WaitMs} ms vs ${shortest.p99WaitMs} ms for ${shortest.subject}`,
      met: ours.p99WaitMs <= (shortest.p99WaitMs ?? 0),
    });
  }
  return checks;
}
