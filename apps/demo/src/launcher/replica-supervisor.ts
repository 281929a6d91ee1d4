import { type ChildProcess, fork } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { LauncherMessage, ReplicaMessage } from '../shared/ipc-messages.js';
import type { ReplicaConfig } from '../shared/replica-config.js';

export type ReplicaStatus = 'starting' | 'up' | 'killed' | 'exited' | 'stopped';

/** What the dashboard shows about a replica. */
export interface ReplicaState {
  name: string;
  pid: number | null;
  port: number | null;
  /** Lock owner id of the current process (name plus pid). */
  owner: string | null;
  status: ReplicaStatus;
  /** When a killed replica will be started again (ms since epoch), if it will. */
  restartAt: number | null;
}

export interface SupervisorHooks {
  onMessage(replica: ReplicaState, message: ReplicaMessage, child: ChildProcess): void;
  /** The process is gone (killed, crashed or stopped); `owner` is the lock owner it had. */
  onExit(replica: ReplicaState, owner: string | null): void;
  onChange(): void;
  log(line: string): void;
}

const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;

/** Forks the replicas, kills and restarts them on request, and stops them all at the end. */
export class ReplicaSupervisor {
  private readonly replicas = new Map<string, { state: ReplicaState; child: ChildProcess | null }>();
  private readonly restartTimers = new Map<string, NodeJS.Timeout>();
  private stopping = false;

  constructor(
    private readonly entry: URL,
    private readonly configs: ReplicaConfig[],
    private readonly restartAfterMs: number,
    private readonly hooks: SupervisorHooks,
  ) {
    for (const config of configs) {
      this.replicas.set(config.name, {
        state: { name: config.name, pid: null, port: null, owner: null, status: 'stopped', restartAt: null },
        child: null,
      });
    }
  }

  /** Starts every replica; resolves once all of them serve HTTP. */
  async startAll(): Promise<void> {
    await Promise.all(this.configs.map((config) => this.start(config)));
  }

  list(): ReplicaState[] {
    return [...this.replicas.values()].map((r) => ({ ...r.state }));
  }

  /** Replicas that are up, with their HTTP port. */
  up(): Array<ReplicaState & { port: number }> {
    return this.list().filter(
      (r): r is ReplicaState & { port: number } => r.status === 'up' && r.port !== null,
    );
  }

  /** SIGKILL, as a crash would: no release, no goodbye. Its locks stay until their leases end. */
  kill(name: string): boolean {
    const replica = this.replicas.get(name);
    if (!replica?.child || replica.state.status !== 'up') return false;
    replica.state.status = 'killed';
    replica.child.kill('SIGKILL');
    if (this.restartAfterMs > 0) {
      replica.state.restartAt = Date.now() + this.restartAfterMs;
      this.restartTimers.set(
        name,
        setTimeout(() => {
          this.restartTimers.delete(name);
          const config = this.configs.find((c) => c.name === name)!;
          this.start(config).catch((error) => this.hooks.log(`${name} did not restart: ${error.message}`));
        }, this.restartAfterMs),
      );
    }
    this.hooks.onChange();
    return true;
  }

  /** Asks every replica to stop (they resign and release), then SIGKILLs what is left. */
  async stopAll(): Promise<void> {
    this.stopping = true;
    for (const timer of this.restartTimers.values()) clearTimeout(timer);
    this.restartTimers.clear();
    await Promise.all(
      [...this.replicas.values()].map(async ({ child }) => {
        if (!child || child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        const shutdown: LauncherMessage = { type: 'shutdown' };
        if (child.connected) child.send(shutdown, () => {});
        const grace = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(grace);
      }),
    );
  }

  private start(config: ReplicaConfig): Promise<void> {
    const replica = this.replicas.get(config.name)!;
    const child = fork(this.entry, [JSON.stringify(config)], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    replica.child = child;
    replica.state = {
      name: config.name,
      pid: child.pid ?? null,
      port: null,
      owner: null,
      status: 'starting',
      restartAt: null,
    };
    this.hooks.onChange();
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream }).on('line', (line) => this.hooks.log(`[${config.name}] ${line}`));
    }

    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${config.name} did not start within ${READY_TIMEOUT_MS / 1000} s`)),
        READY_TIMEOUT_MS,
      );
      child.on('message', (message: ReplicaMessage) => {
        if (message.type === 'ready') {
          clearTimeout(timer);
          replica.state.port = message.port;
          replica.state.owner = message.owner;
          replica.state.status = 'up';
          this.hooks.onChange();
          resolve();
        }
        this.hooks.onMessage(replica.state, message, child);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        const owner = replica.state.owner;
        if (replica.state.status === 'starting') {
          reject(new Error(`${config.name} exited during start-up (${signal ?? `code ${code}`})`));
        }
        if (replica.state.status !== 'killed') replica.state.status = this.stopping ? 'stopped' : 'exited';
        replica.state.pid = null;
        replica.state.port = null;
        this.hooks.onExit({ ...replica.state }, owner);
        this.hooks.onChange();
      });
    });
  }
}
