import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { until } from './until.js';

export const LAUNCHER = fileURLToPath(new URL('../../dist/launcher.js', import.meta.url));

export interface RunningDemo {
  child: ChildProcess;
  url: string;
  /** Pids the launcher reported for its children (replicas, redis-server, DynamoDB Local). */
  childPids: number[];
  output(): string;
  /** Sends SIGINT and resolves with how the launcher exited. */
  interrupt(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts the built launcher (`dist/launcher.js`) as its own process, the way `pnpm demo` does,
 * and waits until it has printed its guide (everything is up).
 */
export async function launchDemo(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<RunningDemo> {
  if (!existsSync(LAUNCHER)) throw new Error('Build the demo first: pnpm --filter @latch/demo build');
  const child = spawn(process.execPath, [LAUNCHER, '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const started = until(
    'the launcher to print its dashboard URL and guide',
    () => text.includes('Press Ctrl-C') && /^Dashboard: (http:\/\/\S+)$/m.exec(text)?.[1],
    90_000,
  );
  const exitedEarly = exited.then(({ code, signal }) => {
    throw new Error(`the launcher exited during start-up (${signal ?? `code ${code}`})`);
  });
  const url = await Promise.race([started, exitedEarly]).catch((error) => {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n--- launcher output ---\n${text}`);
  });
  exitedEarly.catch(() => {});
  started.catch(() => {});
  const processes = /^Processes: (.*)$/m.exec(text)?.[1] ?? '';
  // The list starts with the launcher itself.
  const childPids = [...processes.matchAll(/pid (\d+)/g)]
    .map((m) => Number(m[1]))
    .filter((pid) => pid !== child.pid);
  return {
    child,
    url,
    childPids,
    output: () => text,
    exited,
    async interrupt() {
      child.kill('SIGINT');
      return exited;
    },
  };
}

/** True while a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
