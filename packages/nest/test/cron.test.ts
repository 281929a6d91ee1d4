import { type INestApplication, Inject, Injectable } from '@nestjs/common';
import { Cron, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { describe, expect, test } from 'vitest';
import { currentLock, Locked, LockModule } from '../src/index.js';
import { backends } from './helpers/backends.js';
import { replicasOn } from './helpers/replicas.js';
import { until } from './helpers/wait.js';

type Job = 'above' | 'below';

interface Run {
  job: Job;
  replica: string;
  key: string;
  /** When the run's lock was acquired, by the lock's own record. */
  acquiredAt: number;
  token: number;
}

const REPLICA = 'REPLICA';
const RUNS = 'RUNS';

function record(runs: Run[], job: Job, replica: string): void {
  const lock = currentLock()!;
  runs.push({ job, replica, key: lock.key, acquiredAt: lock.acquiredAt, token: lock.fencingToken });
}

// Jobs on their own timers, every 2 seconds. lockAtLeastMs, shorter than the interval, makes a
// replica whose timer fires a little late find the lock still held and skip.
@Injectable()
class ReportJobs {
  constructor(
    @Inject(REPLICA) private readonly replica: string,
    @Inject(RUNS) private readonly runs: Run[],
  ) {}

  // @Cron above @Locked, on a synchronous method.
  @Cron('*/2 * * * * *', { name: 'above' })
  @Locked('jobs/above', { onLocked: 'skip', lockAtLeastMs: 1500 })
  above(): void {
    record(this.runs, 'above', this.replica);
  }

  // @Locked above @Cron, on an async method.
  @Locked('jobs/below', { onLocked: 'skip', lockAtLeastMs: 1500 })
  @Cron('*/2 * * * * *', { name: 'below' })
  async below(): Promise<void> {
    record(this.runs, 'below', this.replica);
  }
}

// The period a scheduled run belongs to, as a job would compute it from the clock ("the
// report of 10:00"); here the test moves it, one tick at a time.
let period = 0;

// Jobs keyed by period, on a schedule that does not come due during the test (once a year):
// the test fires each tick itself, through @nestjs/schedule's CronJob of every replica. The
// lock of a period is kept for a minute, so a replica that fires the tick late still skips.
@Injectable()
class PeriodJobs {
  constructor(
    @Inject(REPLICA) private readonly replica: string,
    @Inject(RUNS) private readonly runs: Run[],
  ) {}

  @Cron('0 0 0 1 1 *', { name: 'above', waitForCompletion: true })
  @Locked(() => `period/above/${period}`, { onLocked: 'skip', lockAtLeastMs: 60_000 })
  above(): void {
    record(this.runs, 'above', this.replica);
  }

  @Locked(() => `period/below/${period}`, { onLocked: 'skip', lockAtLeastMs: 60_000 })
  @Cron('0 0 0 1 1 *', { name: 'below', waitForCompletion: true })
  async below(): Promise<void> {
    record(this.runs, 'below', this.replica);
  }
}

describe.each(backends)("@Cron with onLocked 'skip' on two replicas sharing the $name", ({ start }) => {
  const apps = replicasOn(start);

  async function replica(
    name: string,
    runs: Run[],
    jobs: typeof ReportJobs | typeof PeriodJobs,
  ): Promise<INestApplication> {
    return apps.start({
      imports: [
        ScheduleModule.forRoot(),
        LockModule.forRoot({ store: apps.store, owner: name, leaseMs: 20_000 }),
      ],
      providers: [jobs, { provide: REPLICA, useValue: name }, { provide: RUNS, useValue: runs }],
    });
  }

  test('when both replicas fire the same tick, the job runs exactly once, whatever the decorator order', async () => {
    const runs: Run[] = [];
    const replicas = [
      await replica('replica-a', runs, PeriodJobs),
      await replica('replica-b', runs, PeriodJobs),
    ];

    for (const job of ['above', 'below'] as const) {
      const runsOf = () => runs.filter((r) => r.job === job);
      for (let tick = 1; tick <= 4; tick++) {
        period += 1;
        // Every replica's CronJob fires, as its timer would; with waitForCompletion,
        // fireOnTick() settles once that replica ran the job or skipped it.
        await Promise.all(replicas.map((app) => app.get(SchedulerRegistry).getCronJob(job).fireOnTick()));
        expect(runsOf()).toHaveLength(tick);
        expect(runsOf()[tick - 1]!.key).toBe(`period/${job}/${period}`);
      }
    }
  });

  test('on their own timers, the jobs run once per tick, and another replica takes over when one stops', async () => {
    const runs: Run[] = [];
    const a = await replica('replica-a', runs, ReportJobs);
    const b = await replica('replica-b', runs, ReportJobs);
    // Both replicas scheduled both jobs with @nestjs/schedule.
    for (const app of [a, b]) {
      expect([...app.get(SchedulerRegistry).getCronJobs().keys()].sort()).toEqual(['above', 'below']);
    }

    const count = (job: Job, replica?: string) =>
      runs.filter((r) => r.job === job && (!replica || r.replica === replica)).length;
    await until(() => count('above') >= 2 && count('below') >= 2);
    // Replica A stops; replica B, which fired every tick too and skipped, now runs the jobs.
    await apps.stop(a);
    await until(() => count('above', 'replica-b') >= 2 && count('below', 'replica-b') >= 2);
    await apps.stop(b);

    for (const job of ['above', 'below'] as const) {
      const jobRuns = runs.filter((r) => r.job === job);
      // Every replica fires a tick at about the same moment, and lockAtLeastMs keeps each
      // acquisition 1.5 s from the next (less a little for clock rounding): never two runs in one tick.
      for (let i = 1; i < jobRuns.length; i++) {
        expect(jobRuns[i]!.acquiredAt - jobRuns[i - 1]!.acquiredAt).toBeGreaterThanOrEqual(1400);
      }
      // One acquisition per run: tokens 1, 2, 3, ... in order.
      expect(jobRuns.map((r) => r.token)).toEqual(jobRuns.map((_, i) => i + 1));
    }
  });
});
