import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const workerScript = fileURLToPath(new URL('../worker.mjs', import.meta.url));
const coreDist = fileURLToPath(new URL('../../../dist/index.js', import.meta.url));

export type StoreSpec =
  | { kind: 'memory' }
  | { kind: 's3'; endpoint: string; bucket: string }
  | { kind: 'dynamodb'; endpoint: string; table: string };

export interface UnitOfWork {
  id: string;
  key: string;
}

/** What one worker process is told to do (see worker.mjs). */
export interface ProcessPlan {
  process: string;
  store: StoreSpec;
  resourceUrl: string;
  lock: { leaseMs: number; pollMs: number; clockMode: 'trusted' | 'untrusted' };
  /** One LockClient each; workers share them round-robin, and start after their client's delay. */
  clients: Array<{ owner: string; skewMs: number; startDelayMs: number }>;
  workers: Array<{ id: string; units: UnitOfWork[] }>;
  /**
   * How long a holder keeps its lock per unit of work, and in how many steps: after its begin it
   * writes the resource `steps` times, `holdMs / steps` apart (the last write is the commit),
   * checking before each write that it still holds the lock.
   */
  holdMs: number;
  steps: number;
  /** Pause between a worker's units. */
  thinkMs: number;
  waitMs: number;
  maxAttemptsPerUnit: number;
  /** Where the resource mirrors each key's highest token, for frozen workers to read synchronously. */
  mirrorDir?: string;
  /** Longest freeze, in case no one ever takes the key over. */
  pauseCapMs: number;
}

export interface PauseReport {
  unit: string;
  key: string;
  token: number;
  blockedMs: number;
  /** What the holder's first look after the pause said (`isHeld` and a live signal): it must say "lost". */
  heldOnFirstLook: boolean;
  /** Whether the write that was on the wire when it froze was accepted: fencing must refuse it. */
  lateWriteAccepted: boolean;
  signalAborted: boolean;
}

/** An acquisition or renewal a worker's client reported (its onEvent), sent over IPC as it happens. */
export interface LeaseNote {
  type: 'acquired' | 'renewed';
  key: string;
  token: number;
  /** The lease's end as stored, on the writer's wall clock (ms). */
  expiresAt: number | null;
}

export interface ProcessReport {
  process: string;
  done: string[];
  acquisitions: number;
  abandonedAfterLoss: number;
  /** Acquisitions whose lock was already lost when acquire resolved (see the workaround in worker.mjs). */
  lostOnArrival: number;
  typedErrors: Record<string, number>;
  untypedErrors: string[];
  pauses: PauseReport[];
}

export interface ProcessOutcome {
  plan: ProcessPlan;
  /** Set when the process finished and reported. */
  report?: ProcessReport;
  /** Every acquisition and renewal its clients reported, also from a process that was killed. */
  leases: LeaseNote[];
  /** Set when the test killed it (test-process monotonic ms). */
  killedAt?: number;
  /** Why it failed, when it neither reported nor was killed. */
  failure?: string;
}

interface WorkerMessage {
  type: 'ready' | 'lease' | 'report' | 'crash';
  lease?: LeaseNote;
  report?: ProcessReport;
  error?: string;
}

/**
 * Runs worker processes (real child processes running the built @latch/core) and collects
 * their reports. Every process loads first; all start together so they contend from the start.
 */
export class WorkerProcesses {
  private readonly children = new Map<string, ChildProcess>();
  private readonly outcomes = new Map<string, ProcessOutcome>();
  /** The end of each process's stderr, to explain a failure. */
  private readonly stderrTails = new Map<string, string>();

  constructor(private readonly plans: readonly ProcessPlan[]) {
    if (!existsSync(coreDist)) {
      throw new Error(
        'The chaos workers run the built package: build @latch/core first (pnpm --filter @latch/core build).',
      );
    }
  }

  /** Kills a process with SIGKILL now (no cleanup, no release), noting when. False if it was already dead. */
  kill(processId: string): boolean {
    const outcome = this.outcomes.get(processId);
    const child = this.children.get(processId);
    if (!outcome || !child || outcome.killedAt !== undefined || child.exitCode !== null) return false;
    outcome.killedAt = performance.now();
    return child.kill('SIGKILL');
  }

  /** Starts every process, resolves when all have reported, exited or been killed. */
  async run(deadlineMs: number): Promise<ProcessOutcome[]> {
    const exits: Array<Promise<void>> = [];
    const ready: Array<Promise<void>> = [];
    for (const plan of this.plans) {
      const outcome: ProcessOutcome = { plan, leases: [] };
      this.outcomes.set(plan.process, outcome);
      const child = fork(workerScript, [], { execArgv: [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
      this.children.set(plan.process, child);
      this.stderrTails.set(plan.process, '');
      child.stderr?.on('data', (chunk: Buffer) => {
        const tail = this.stderrTails.get(plan.process)! + chunk.toString('utf8');
        this.stderrTails.set(plan.process, tail.slice(-4000));
      });
      ready.push(
        new Promise<void>((resolve) => {
          child.on('message', (message: WorkerMessage) => {
            if (message.type === 'ready') resolve();
            if (message.type === 'lease') outcome.leases.push(message.lease!);
            if (message.type === 'report') outcome.report = message.report!;
            if (message.type === 'crash') outcome.failure = message.error!;
          });
          child.on('exit', () => resolve());
        }),
      );
      exits.push(
        new Promise<void>((resolve) => {
          child.on('exit', (code, signal) => {
            if (!outcome.report && outcome.killedAt === undefined) {
              outcome.failure ??= `exited with ${code ?? signal} before reporting. ${this.stderrOf(plan.process)}`;
            }
            resolve();
          });
        }),
      );
      child.send({ type: 'plan', plan });
    }
    // The deadline covers loading too: a process that never gets ready fails the run as well.
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        for (const [id, child] of this.children) {
          const outcome = this.outcomes.get(id)!;
          if (child.exitCode === null && child.signalCode === null && outcome.killedAt === undefined) {
            outcome.failure = `still running after the scenario deadline of ${deadlineMs} ms. ${this.stderrOf(id)}`;
            child.kill('SIGKILL');
          }
        }
        resolve();
      }, deadlineMs);
    });
    await Promise.race([Promise.all(ready), deadline]);
    for (const child of this.children.values()) if (child.connected) child.send({ type: 'start' });
    await Promise.race([Promise.all(exits), deadline]);
    clearTimeout(timer);
    await Promise.all(exits);
    return [...this.outcomes.values()];
  }

  private stderrOf(processId: string): string {
    return `stderr:\n${this.stderrTails.get(processId) ?? ''}`;
  }
}
