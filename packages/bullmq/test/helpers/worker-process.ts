import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** What a worker process is told: see workers/locked-worker.mjs. */
export interface WorkerProcessConfig {
  name: string;
  queue: string;
  redisUrl: string;
  s3Endpoint: string;
  bucket: string;
  style: 'withLock' | 'LockedWorker';
  concurrency: number;
  leaseMs: number;
  lockDuration: number;
  stalledInterval: number;
  /** withLock's `limit` (left out: one job of a key at a time). */
  limit?: number;
}

export interface WorkerProcess {
  readonly child: ChildProcess;
  /** The version of BullMQ the process loaded (the worker script and the built @latch/bullmq share it). */
  readonly bullmqVersion: string;
  /** Everything the process wrote to stderr, for failure messages. */
  readonly stderr: () => string;
  /** SIGKILL: the process dies mid-job without any clean-up. */
  kill(): Promise<void>;
  /** SIGTERM: the worker closes cleanly; SIGKILL if it has not exited after a while. */
  stop(): Promise<void>;
}

const script = fileURLToPath(new URL('../workers/locked-worker.mjs', import.meta.url));
const aliasHook = fileURLToPath(new URL('../workers/bullmq-alias.mjs', import.meta.url));

/**
 * Node options that make a child process load the same BullMQ as this project: the vitest project
 * of an aliased major (see vitest.config.ts) sets LATCH_TEST_BULLMQ_PACKAGE, which the child
 * inherits, and its `bullmq` imports are then resolved to that package by bullmq-alias.mjs.
 */
function bullmqNodeOptions(): string[] {
  const target = process.env.LATCH_TEST_BULLMQ_PACKAGE;
  return target === undefined || target === 'bullmq' ? [] : ['--import', aliasHook];
}

/** Starts a worker in its own Node process and resolves once it is connected and waiting for jobs. */
export async function startWorkerProcess(config: WorkerProcessConfig): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [...bullmqNodeOptions(), script, JSON.stringify(config)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const bullmqVersion = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker ${config.name} not ready:\n${stderr}`)), 60_000);
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk;
      const ready = /^ready bullmq@(\S+)$/m.exec(stdout);
      if (ready) {
        clearTimeout(timer);
        resolve(ready[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker ${config.name} exited with ${code} before it was ready:\n${stderr}`));
    });
  });
  const signalAndWait = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    child,
    bullmqVersion,
    stderr: () => stderr,
    kill: () => signalAndWait('SIGKILL'),
    async stop() {
      const forced = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await signalAndWait('SIGTERM');
      clearTimeout(forced);
    },
  };
}
