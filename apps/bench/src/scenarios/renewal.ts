import { setMaxListeners } from 'node:events';
import { monotonicMs } from '../clock.js';
import { countsBetween } from '../counting/request-tally.js';
import type { RenewalRow } from '../results.js';
import { runWorkers } from '../run-workers.js';
import { sleep } from '../sleep.js';
import { round } from '../stats.js';
import type { SubjectInfo } from '../subjects/catalog.js';
import type { LockSubject } from '../subjects/lock-subject.js';
import type { SemaphoreClient } from '../subjects/semaphore-client.js';
import type { RenewalOutput, RenewalTask } from '../worker-protocol.js';
import { firstLine, type ScenarioContext, WORKER_SLACK_MS } from './scenario-context.js';

/** How long acquiring the 100 locks may take before the worker gives up. */
export const ACQUIRE_ALL_MS = 30_000;

/**
 * Scenario 4, worker side: acquire `locks` keys, let them settle, then count the requests
 * the library sends during the window just to keep them held (heartbeats, extensions). The
 * semaphore scenario's renewal part runs it with `task.semaphore`: `locks` places on
 * locks / limit keys, counting the renewals that landed and the leases lost too.
 */
export async function performRenewal(subject: LockSubject, task: RenewalTask): Promise<RenewalOutput> {
  const signal = AbortSignal.timeout(ACQUIRE_ALL_MS);
  setMaxListeners(0, signal); // all the acquisitions listen to it, by design
  const semaphore = task.semaphore && semaphoreClientOf(subject, task.semaphore.leaseMs);
  const keys = task.semaphore ? Math.ceil(task.locks / task.semaphore.limit) : task.locks;
  await Promise.all(
    Array.from({ length: task.locks }, (_, i) => {
      const key = `${task.keyPrefix}/${i % keys}`;
      return semaphore ? semaphore.acquire(key, task.semaphore!.limit, signal) : subject.acquire(key, signal);
    }),
  );
  await sleep(task.settleMs);
  const before = subject.requests.snapshot();
  const renewalsBefore = semaphore?.renewals ?? 0;
  const startedAt = monotonicMs();
  await sleep(task.windowMs);
  const requests = countsBetween(before, subject.requests.snapshot());
  const output: RenewalOutput = {
    scenario: 'renewal',
    requests,
    windowMs: monotonicMs() - startedAt,
    held: task.locks,
  };
  if (semaphore) {
    output.renewals = semaphore.renewals - renewalsBefore;
    output.lost = semaphore.lost;
  }
  return output;
}

function semaphoreClientOf(subject: LockSubject, leaseMs: number): SemaphoreClient {
  if (!subject.newSemaphoreClient) throw new Error('This subject has no semaphore client.');
  return subject.newSemaphoreClient({ leaseMs });
}

/**
 * Scenario 4, parent side. Only requests are counted here, not time, so every subject runs
 * at once, each in its own worker process: a full minute in total instead of one per subject.
 */
export async function measureRenewal(
  ctx: ScenarioContext,
  subjects: readonly SubjectInfo[],
): Promise<RenewalRow[]> {
  const plan = ctx.plan.renewal;
  const renewing = subjects.filter((subject) => subject.renews);
  const tasks: RenewalTask[] = renewing.map((subject) => ({
    scenario: 'renewal',
    subject: subject.id,
    backends: ctx.backends,
    keyPrefix: `${ctx.runId}/renewal/${subject.id}`,
    locks: plan.locks,
    settleMs: plan.settleMs,
    windowMs: plan.windowMs,
  }));
  const rows: RenewalRow[] = subjects
    .filter((subject) => !subject.renews)
    .map((subject) => ({ subject: subject.id, status: 'not-applicable', note: 'does not renew held locks' }));
  // One worker run per subject, all at once; a failure fails only its own row.
  const timeoutMs = ACQUIRE_ALL_MS + plan.settleMs + plan.windowMs + WORKER_SLACK_MS;
  const settled = await Promise.allSettled(
    tasks.map((task) => runWorkers([task], { windowMs: 0, timeoutMs })),
  );
  settled.forEach((outcome, index) => {
    const subject = renewing[index]!.id;
    if (outcome.status === 'rejected') {
      rows.push({ subject, status: 'failed', note: firstLine(outcome.reason) });
      return;
    }
    const output = outcome.value.outputs[0] as RenewalOutput;
    const perMinute = 60_000 / output.windowMs;
    rows.push({
      subject,
      status: 'ok',
      locks: output.held,
      windowMs: round(output.windowMs, 0),
      requestsPerMinute: round(output.requests.total * perMinute, 1),
      perMinuteByOp: Object.fromEntries(
        Object.entries(output.requests.byOp).map(([op, count]) => [op, round(count * perMinute, 1)]),
      ),
    });
  });
  const order = subjects.map((subject) => subject.id);
  return rows.sort((a, b) => order.indexOf(a.subject) - order.indexOf(b.subject));
}
