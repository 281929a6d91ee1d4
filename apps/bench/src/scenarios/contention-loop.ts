import { setMaxListeners } from 'node:events';
import { monotonicMs } from '../clock.js';
import { countsBetween, type RequestCounts } from '../counting/request-tally.js';
import { sleep, sleepUntil } from '../sleep.js';
import type { LockSubject } from '../subjects/lock-subject.js';
import type { Acquisition, ContentionOutput, ContentionTask } from '../worker-protocol.js';

/** How long contenders may take to wind down after the window before the worker reports anyway. */
const WIND_DOWN_MS = 5_000;

/**
 * The worker side of the hand-off and many-keys scenarios: `contenders` loops, each
 * acquiring a key (one of `keys`, at random), holding it `holdMs`, releasing, and starting
 * over, from `startAt` until `endAt`. Waiting acquisitions are aborted at `endAt`; holders
 * finish their hold and release. Every acquisition is recorded for the overlap check.
 */
export async function performContention(
  subject: LockSubject,
  task: ContentionTask,
  window: { startAt: number; endAt: number },
): Promise<ContentionOutput> {
  const acquisitions: Acquisition[] = [];
  const unfinishedWaitsMs: number[] = [];
  let releaseErrors = 0;
  const stop = new AbortController();
  setMaxListeners(0, stop.signal); // every waiting contender listens to it, by design
  await sleepUntil(window.startAt);
  const before = subject.requests.snapshot();
  const cpuBefore = process.cpuUsage();
  let inWindow: RequestCounts | undefined;
  let cpuMs = 0;
  const closeWindow = setTimeout(() => {
    inWindow = countsBetween(before, subject.requests.snapshot());
    const cpu = process.cpuUsage(cpuBefore);
    cpuMs = (cpu.user + cpu.system) / 1000;
    stop.abort(new Error('the measurement window is over'));
  }, window.endAt - monotonicMs());

  const contender = async (index: number) => {
    const holder = `p${task.processIndex}c${index}`;
    while (!stop.signal.aborted && monotonicMs() < window.endAt) {
      // An in-process store can complete whole cycles in microtasks; yield so timers still run.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const key = `${task.keyPrefix}/${Math.floor(Math.random() * task.keys)}`;
      const askedAt = monotonicMs();
      let held: Awaited<ReturnType<LockSubject['acquire']>>;
      try {
        held = await subject.acquire(key, stop.signal);
      } catch (error) {
        if (!stop.signal.aborted) throw error;
        // Still waiting when the window closed: it waited at least this long.
        unfinishedWaitsMs.push(window.endAt - askedAt);
        return;
      }
      const acquiredAt = monotonicMs();
      if (task.holdMs > 0) await sleep(task.holdMs);
      acquisitions.push({ key, holder, acquiredAt, releasedAt: monotonicMs(), waitMs: acquiredAt - askedAt });
      await held.release().catch(() => {
        releaseErrors++;
      });
    }
  };

  const all = Promise.all(Array.from({ length: task.contenders }, (_, index) => contender(index)));
  all.catch(() => undefined); // a failure is reported through the race below
  const windDown = new Promise<void>((resolve) =>
    setTimeout(resolve, window.endAt - monotonicMs() + WIND_DOWN_MS),
  );
  try {
    await Promise.race([all, windDown]);
  } finally {
    clearTimeout(closeWindow);
  }
  return {
    scenario: task.scenario,
    acquisitions: [...acquisitions],
    unfinishedWaitsMs,
    requests: inWindow ?? countsBetween(before, subject.requests.snapshot()),
    releaseErrors,
    cpuMs,
  };
}
