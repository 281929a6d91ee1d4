import { monotonicMs } from '../clock.js';
import { addCounts, countsBetween, type RequestCounts } from '../counting/request-tally.js';
import type { HeldLock, LockSubject } from '../subjects/lock-subject.js';
import type { SemaphoreClient } from '../subjects/semaphore-client.js';
import type {
  SemaphoreCycleMode,
  SemaphoreCyclesOutput,
  SemaphoreCyclesTask,
  SemaphoreModeOutput,
} from '../worker-protocol.js';

const NONE: RequestCounts = { total: 0, byOp: {} };

/**
 * The semaphore scenario's uncontended part, worker side: for each mode, acquire + release of
 * the same key(s) over and over, timing and counting the acquire and the release apart. The
 * same key every cycle, so each cycle finds the record the previous one left: the steady
 * state of a key in use, not the first acquisition of a new one.
 */
export async function performSemaphoreCycles(
  subject: LockSubject,
  task: SemaphoreCyclesTask,
): Promise<SemaphoreCyclesOutput> {
  if (!subject.newSemaphoreClient) throw new Error(`${task.subject} has no semaphore client.`);
  const clients = [subject.newSemaphoreClient(), subject.newSemaphoreClient()];
  const modes: SemaphoreModeOutput[] = [];
  for (const [index, mode] of task.modes.entries()) {
    modes.push(await cycleMode(subject, clients, mode, `${task.keyPrefix}/${index}`, task));
  }
  return { scenario: 'semaphore-cycles', modes };
}

async function cycleMode(
  subject: LockSubject,
  clients: SemaphoreClient[],
  mode: SemaphoreCycleMode,
  keyPrefix: string,
  task: SemaphoreCyclesTask,
): Promise<SemaphoreModeOutput> {
  const never = new AbortController().signal;
  const keys = Array.from({ length: mode.keys }, (_, i) => `${keyPrefix}/${i}`);
  const take = (cycle: number): Promise<HeldLock> => {
    const client = clients[cycle % mode.clients]!;
    return mode.keys > 1 ? client.acquireAll(keys, never) : client.acquire(keys[0]!, mode.limit, never);
  };
  // Warm-up: connections set up, and every client has seen the key(s) once.
  for (let i = 0; i < task.warmupCycles; i++) await (await take(i)).release();

  const out: SemaphoreModeOutput = {
    mode,
    acquireMs: [],
    releaseMs: [],
    acquireRequests: NONE,
    releaseRequests: NONE,
  };
  const started = monotonicMs();
  for (let i = 0; i < task.cycles && monotonicMs() - started < task.maxMs; i++) {
    const before = subject.requests.snapshot();
    const begin = monotonicMs();
    // Numbered on from the warm-up, so that clients in turn keep alternating across it.
    const held = await take(task.warmupCycles + i);
    const acquired = monotonicMs();
    const between = subject.requests.snapshot();
    await held.release();
    out.releaseMs.push(monotonicMs() - acquired);
    out.acquireMs.push(acquired - begin);
    out.acquireRequests = addCounts(out.acquireRequests, countsBetween(before, between));
    out.releaseRequests = addCounts(out.releaseRequests, countsBetween(between, subject.requests.snapshot()));
  }
  return out;
}
