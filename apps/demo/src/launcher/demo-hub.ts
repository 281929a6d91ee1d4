import type { ChildProcess } from 'node:child_process';
import type { Queue, QueueEvents } from 'bullmq';
import type { LauncherMessage, ReplicaMessage } from '../shared/ipc-messages.js';
import { lockLimit } from '../shared/replica-config.js';
import { type BurstResult, runChargeBurst } from './charge-burst.js';
import { DashboardFeed } from './dashboard-feed.js';
import { type ExportRunResult, runExports } from './export-run.js';
import { HoldTimeline } from './hold-timeline.js';
import { type JobBatchResult, runJobBatch } from './job-batch.js';
import { LedgerService } from './ledger-routes.js';
import { LockBoard } from './lock-board.js';
import type { MemoryStoreHost } from './memory-store-host.js';
import type { ReplicaState, ReplicaSupervisor } from './replica-supervisor.js';

/** What a dashboard receives when it connects. */
export interface DemoSnapshot {
  serverNow: number;
  store: string;
  leaseMs: number;
  notices: string[];
  queueEnabled: boolean;
  replicas: ReplicaState[];
  locks: ReturnType<LockBoard['locks']>;
  timeline: ReturnType<LockBoard['recent']>;
  /** Holds and waits per key, for the timeline chart. */
  holds: ReturnType<HoldTimeline['lanes']>;
  results: DemoResult[];
  running: Running;
}

type DemoResult = BurstResult | JobBatchResult | ExportRunResult;
/** Which actions are under way: each runs one at a time. */
type Running = { burst: boolean; jobs: boolean; exports: boolean };

export interface DemoHubSettings {
  store: string;
  leaseMs: number;
  notices: string[];
  memoryHost: MemoryStoreHost | undefined;
  queue: { queue: Queue; events: QueueEvents } | undefined;
}

/** Refused action, with the HTTP status the dashboard gets. */
export class DemoActionError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const LOCKS_PUSH_MS = 150;
/** Renewals move every running hold's lease a few times a second: lanes go out in batches. */
const HOLDS_PUSH_MS = 250;

/**
 * The launcher's centre: routes the replicas' messages (lock events to the board and the
 * dashboards, store calls to the memory store), and runs the dashboard's actions.
 */
export class DemoHub {
  readonly feed = new DashboardFeed();
  readonly board = new LockBoard(lockLimit);
  readonly holds = new HoldTimeline(lockLimit);
  readonly ledger = new LedgerService();
  private supervisor: ReplicaSupervisor | undefined;
  private readonly results: DemoResult[] = [];
  private readonly running: Running = { burst: false, jobs: false, exports: false };
  private bursts = 0;
  private batches = 0;
  private exportRuns = 0;
  private locksPush: NodeJS.Timeout | undefined;
  private holdsPush: NodeJS.Timeout | undefined;
  /** Keys whose lane changed since the last push. */
  private readonly changedLanes = new Set<string>();

  constructor(private readonly settings: DemoHubSettings) {}

  attach(supervisor: ReplicaSupervisor): void {
    this.supervisor = supervisor;
  }

  snapshot(): DemoSnapshot {
    return {
      serverNow: Date.now(),
      store: this.settings.store,
      leaseMs: this.settings.leaseMs,
      notices: this.settings.notices,
      queueEnabled: this.settings.queue !== undefined,
      replicas: this.supervisor?.list() ?? [],
      locks: this.board.locks(),
      timeline: this.board.recent(),
      holds: this.holds.lanes(),
      results: this.results.slice(-10),
      running: { ...this.running },
    };
  }

  onReplicaMessage(replica: ReplicaState, message: ReplicaMessage, child: ChildProcess): void {
    switch (message.type) {
      case 'lock-event': {
        const entry = this.board.apply(message.event);
        if (entry) this.feed.send('timeline', entry);
        this.pushLocksSoon();
        const lane = this.holds.apply(message.event);
        if (lane) this.pushLanesSoon([lane]);
        break;
      }
      case 'store-call':
        void this.answerStoreCall(message.id, message.call, child);
        break;
      case 'log':
        if (message.level !== 'info') console.error(`[${replica.name}] ${message.message}`);
        break;
      case 'ready':
        break;
    }
  }

  onReplicaExit(replica: ReplicaState, owner: string | null): void {
    this.board.forgetWaiters(replica.name);
    if (owner) this.ledger.work.abandon(owner);
    this.pushLocksSoon();
    this.pushLanesSoon(this.holds.replicaGone(replica.name, Date.now()));
  }

  replicasChanged(): void {
    this.feed.send('replicas', { replicas: this.supervisor?.list() ?? [], serverNow: Date.now() });
  }

  /** Starts a burst; throws DemoActionError at once when it cannot. */
  burst(): Promise<BurstResult> {
    if (this.running.burst) throw new DemoActionError(409, 'A burst is running; wait for its result.');
    const up = this.supervisor?.up() ?? [];
    if (up.length === 0) throw new DemoActionError(503, 'No replica is up to take charges.');
    return this.run('burst', () => runChargeBurst(++this.bursts, up, this.ledger));
  }

  /** Starts a batch of jobs; throws DemoActionError at once when it cannot. */
  enqueueJobs(): Promise<JobBatchResult> {
    const queue = this.settings.queue;
    if (!queue) throw new DemoActionError(503, 'The BullMQ queue is off: redis-server was not found.');
    if (this.running.jobs) throw new DemoActionError(409, 'A batch is running; wait for its result.');
    return this.run('jobs', () =>
      runJobBatch(++this.batches, queue.queue, queue.events, this.ledger, this.board),
    );
  }

  /** Starts a run of exports of one customer; throws DemoActionError at once when it cannot. */
  exports(): Promise<ExportRunResult> {
    if (this.running.exports) throw new DemoActionError(409, 'Exports are running; wait for their result.');
    const up = this.supervisor?.up() ?? [];
    if (up.length === 0) throw new DemoActionError(503, 'No replica is up to run exports.');
    return this.run('exports', () => runExports(++this.exportRuns, up, this.ledger));
  }

  kill(name: string): void {
    const replica = this.supervisor?.list().find((r) => r.name === name);
    if (!replica) throw new DemoActionError(404, `There is no replica named ${name}.`);
    if (!this.supervisor!.kill(name))
      throw new DemoActionError(409, `${name} is not up (${replica.status}).`);
  }

  close(): void {
    clearTimeout(this.locksPush);
    clearTimeout(this.holdsPush);
    this.feed.close();
  }

  private async run<R extends DemoResult>(kind: keyof Running, work: () => Promise<R>): Promise<R> {
    this.running[kind] = true;
    this.feed.send('running', { ...this.running });
    try {
      const result = await work();
      this.results.push(result);
      this.feed.send('result', result);
      return result;
    } finally {
      this.running[kind] = false;
      this.feed.send('running', { ...this.running });
    }
  }

  private async answerStoreCall(
    id: number,
    call: Parameters<MemoryStoreHost['answer']>[0],
    child: ChildProcess,
  ): Promise<void> {
    const host = this.settings.memoryHost;
    const reply = host
      ? await host.answer(call)
      : ({ ok: false, message: 'this launcher does not host a memory store' } as const);
    const message: LauncherMessage = { type: 'store-reply', id, reply };
    if (child.connected) child.send(message, () => {});
  }

  /** Lock table updates, at most a few per second: renewals arrive often. */
  private pushLocksSoon(): void {
    if (this.locksPush) return;
    this.locksPush = setTimeout(() => {
      this.locksPush = undefined;
      this.feed.send('locks', { locks: this.board.locks(), serverNow: Date.now() });
    }, LOCKS_PUSH_MS);
  }

  /** The changed lanes, with every key there is (the dashboard drops lanes no longer listed). */
  private pushLanesSoon(keys: string[]): void {
    for (const key of keys) this.changedLanes.add(key);
    if (this.holdsPush || this.changedLanes.size === 0) return;
    this.holdsPush = setTimeout(() => {
      this.holdsPush = undefined;
      const lanes = this.holds.lanes(this.changedLanes);
      this.changedLanes.clear();
      this.feed.send('holds', { lanes, keys: this.holds.keys(), serverNow: Date.now() });
    }, HOLDS_PUSH_MS);
  }
}
