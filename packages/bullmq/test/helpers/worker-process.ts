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
}

export interface WorkerProcess {
  readonly child: ChildProcess;
  /** Everything the process wrote to stderr, for failure messages. */
  readonly stderr: () => string;
  /** SIGKILL: the process dies mid-job without any clean-up. */
  kill(): Promise<void>;
  /** SIGTERM: the worker closes cleanly; SIGKILL if it has not exited after a while. */
  stop(): Promise<void>;
}

const script = fileURLToPath(new URL('../workers/locked-worker.mjs', import.meta.url));

/** Starts a worker in its own Node process and resolves once it is connected and waiting for jobs. */
export async function startWorkerProcess(config: WorkerProcessConfig): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [script, JSON.stringify(config)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker ${config.name} not ready:\n${stderr}`)), 60_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) {
        clearTimeout(timer);
        resolve();
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
    stderr: () => stderr,
    kill: () => signalAndWait('SIGKILL'),
    async stop() {
      const forced = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await signalAndWait('SIGTERM');
      clearTimeout(forced);
    },
  };
}
