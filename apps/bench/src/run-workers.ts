import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monotonicMs } from './clock.js';
import type { FromWorker, ToWorker, WorkerOutput, WorkerTask } from './worker-protocol.js';

/**
 * Keeps the SDKs' notices out of the bench output: aws-sdk v2 (which a peer needs) announces
 * its maintenance mode, and SDK v3 its future Node version floor, once per process.
 */
export const QUIET_SDK_ENV = {
  AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
} as const;

/** The compiled worker: next to this file in dist, or in dist when running from source (tests). */
export function workerScriptPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'worker.js'), join(here, '..', 'dist', 'worker.js')];
  const found = candidates.find((path) => existsSync(path));
  if (!found) {
    throw new Error('The bench worker is not built: run `pnpm --filter @latch/bench build` first.');
  }
  return found;
}

export interface RunWorkersOptions {
  /** Length of the measurement window for windowed scenarios (0 for the others). */
  windowMs: number;
  /** Kill the workers and fail if they have not all reported after this long. */
  timeoutMs: number;
}

export interface WorkerRun {
  /** One output per task, in task order. */
  outputs: WorkerOutput[];
  /** The window every worker was given, on the shared monotonic clock. */
  startAt: number;
  endAt: number;
}

/**
 * Forks one worker per task, waits until every worker has set up its subject, then starts
 * them all at the same moment (a shared start and end on the monotonic clock) and collects
 * their outputs, in task order. Any worker failure fails the whole run.
 */
export async function runWorkers(
  tasks: readonly WorkerTask[],
  options: RunWorkersOptions,
): Promise<WorkerRun> {
  const script = workerScriptPath();
  const children: ChildProcess[] = [];
  const outputs: WorkerOutput[] = new Array(tasks.length);
  const window = { startAt: 0, endAt: 0 };
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Workers did not finish within ${options.timeoutMs} ms.`)),
        options.timeoutMs,
      );
      let ready = 0;
      let done = 0;
      tasks.forEach((task, index) => {
        const child = fork(script, [], {
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
          env: { ...process.env, ...QUIET_SDK_ENV },
        });
        children.push(child);
        child.on('message', (message: FromWorker) => {
          if (message.type === 'ready' && ++ready === tasks.length) {
            window.startAt = monotonicMs() + 200;
            window.endAt = window.startAt + options.windowMs;
            const go: ToWorker = { type: 'go', ...window };
            for (const each of children) each.send(go);
          } else if (message.type === 'done') {
            outputs[index] = message.output;
            if (++done === tasks.length) resolve();
          } else if (message.type === 'failed') {
            reject(new Error(`${task.subject} worker failed in ${task.scenario}: ${message.message}`));
          }
        });
        child.on('close', (code) => {
          if (outputs[index] === undefined) {
            reject(new Error(`${task.subject} worker exited (code ${code}) before reporting.`));
          }
        });
        child.send({ type: 'task', task } satisfies ToWorker);
      });
    });
    return { outputs, ...window };
  } finally {
    clearTimeout(timer);
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
