import { performContention } from './scenarios/contention-loop.js';
import { performCpu } from './scenarios/cpu.js';
import { performRenewal } from './scenarios/renewal.js';
import { performSemaphoreContention } from './scenarios/semaphore-contention.js';
import { performSemaphoreCycles } from './scenarios/semaphore-cycles.js';
import { performUncontended } from './scenarios/uncontended.js';
import type { LockSubject } from './subjects/lock-subject.js';
import { openSubject } from './subjects/open-subject.js';
import type { FromWorker, ToWorker, WorkerOutput, WorkerTask } from './worker-protocol.js';

// Entry point of a worker process (forked by run-workers.ts): sets up one subject, says it
// is ready, runs its scenario when told to go, reports, and exits.

function send(message: FromWorker): Promise<void> {
  return new Promise((resolve) => process.send!(message, undefined, {}, () => resolve()));
}

function describeError(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

function perform(
  subject: LockSubject,
  task: WorkerTask,
  go: { startAt: number; endAt: number },
): Promise<WorkerOutput> {
  switch (task.scenario) {
    case 'uncontended':
      return performUncontended(subject, task);
    case 'handoff':
    case 'many-keys':
      return performContention(subject, task, go);
    case 'renewal':
      return performRenewal(subject, task);
    case 'semaphore':
      return performSemaphoreContention(subject, task, go);
    case 'semaphore-cycles':
      return performSemaphoreCycles(subject, task);
    case 'cpu':
      return performCpu(task);
  }
}

/** Reports, then exits: libraries may keep timers (heartbeats, abandoned waits) alive. */
async function finish(message: FromWorker, subject?: LockSubject): Promise<never> {
  await send(message);
  await subject?.close().catch(() => undefined);
  process.exit(0);
}

if (!process.send) {
  console.error('worker.js is started by the bench itself (pnpm bench), not directly.');
  process.exit(2);
}

let task: WorkerTask | undefined;
let subject: LockSubject | undefined;
process.on('message', (message: ToWorker) => {
  if (message.type === 'task') {
    task = message.task;
    openSubject(task.subject, task.backends)
      .then((opened) => {
        subject = opened;
        return send({ type: 'ready' });
      })
      .catch((error: unknown) => finish({ type: 'failed', message: describeError(error) }));
    return;
  }
  if (message.type === 'go' && task && subject) {
    perform(subject, task, message)
      .then((output) => finish({ type: 'done', output }, subject))
      .catch((error: unknown) => finish({ type: 'failed', message: describeError(error) }, subject));
  }
});
