import { S3Client } from '@aws-sdk/client-s3';
import { LockClient, type LockEvent, memoryStore, s3Store } from '@latch/core';
import { startS3Server } from '@latch/testing';
import {
  Controller,
  Get,
  type INestApplication,
  Inject,
  Injectable,
  Module,
  Param,
  Scope,
} from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import request from 'supertest';
import { afterEach, describe, expect, test } from 'vitest';
import {
  currentLock,
  getLockServiceToken,
  InjectLockService,
  Locked,
  LockModule,
  LockService,
} from '../src/index.js';
import { startApp } from './helpers/nest.js';

@Injectable()
class ReportService {
  @Locked('report:{0}')
  async build(day: string): Promise<string> {
    return `report ${day} #${currentLock()!.fencingToken}`;
  }

  @Locked('audit:{0}', { client: 'audit' })
  async audit(entry: string): Promise<string> {
    return `audit ${entry} #${currentLock()!.fencingToken}`;
  }
}

@Injectable()
class AuditTrail {
  constructor(
    readonly locks: LockService,
    @InjectLockService('audit') readonly auditLocks: LockService,
  ) {}
}

let apps: INestApplication[] = [];
afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()));
  apps = [];
});

async function track(app: Promise<INestApplication>): Promise<INestApplication> {
  apps.push(await app);
  return apps[apps.length - 1]!;
}

describe('LockModule.forRootAsync', () => {
  test('builds the S3 store from ConfigService, and @Locked methods lock in that bucket', async () => {
    await using s3 = await startS3Server({ bucket: 'app-locks' });
    const clients: S3Client[] = [];
    const app = await track(
      startApp({
        imports: [
          ConfigModule.forRoot({
            ignoreEnvFile: true,
            load: [() => ({ LOCK_BUCKET: 'app-locks', S3_ENDPOINT: s3.endpoint })],
          }),
          LockModule.forRootAsync({
            imports: [ConfigModule],
            inject: [ConfigService],
            useFactory: (config: ConfigService) => {
              const client = new S3Client({
                ...s3.clientConfig(),
                endpoint: config.getOrThrow('S3_ENDPOINT'),
              });
              clients.push(client);
              return {
                store: s3Store({ client, bucket: config.getOrThrow('LOCK_BUCKET'), prefix: 'locks/' }),
                leaseMs: 20_000,
              };
            },
          }),
          LockModule.forRoot({ name: 'audit', store: memoryStore() }),
        ],
        providers: [ReportService],
      }),
    );

    await expect(app.get(ReportService).build('2026-11-23')).resolves.toBe('report 2026-11-23 #1');
    // The lock record was written to the configured bucket under the prefix.
    expect(s3.requestLog).toContainEqual(
      expect.objectContaining({
        op: 'PutObject',
        bucket: 'app-locks',
        key: 'locks/report:2026-11-23',
        status: 200,
      }),
    );
    const locks = app.get(LockService);
    expect(locks.client.settings.leaseMs).toBe(20_000);
    expect(await locks.inspect('report:2026-11-23')).toMatchObject({ state: 'free', fencingToken: 1 });

    await app.close();
    apps = [];
    for (const client of clients) client.destroy();
  });

  test('a factory that returns no store fails at bootstrap, saying what it needs', async () => {
    await expect(
      startApp({
        imports: [LockModule.forRootAsync({ useFactory: async () => ({ leaseMs: 1000 }) as never })],
      }),
    ).rejects.toThrow(/useFactory of LockModule\.forRootAsync\(\) needs a store/);
  });
});

describe('several named clients', () => {
  test('@Locked({ client }) and @InjectLockService(name) use the named client; the rest use the default', async () => {
    const mainStore = memoryStore();
    const auditStore = memoryStore();
    const app = await track(
      startApp({
        imports: [
          LockModule.forRoot({ store: mainStore }),
          LockModule.forRoot({ name: 'audit', store: auditStore }),
        ],
        providers: [ReportService, AuditTrail],
      }),
    );
    const reports = app.get(ReportService);
    await expect(reports.audit('login')).resolves.toBe('audit login #1');
    await expect(reports.build('monday')).resolves.toBe('report monday #1');

    const inMain = new LockClient({ store: mainStore });
    const inAudit = new LockClient({ store: auditStore });
    expect((await inAudit.inspect('audit:login')).fencingToken).toBe(1);
    expect((await inMain.inspect('audit:login')).fencingToken).toBe(0);
    expect((await inMain.inspect('report:monday')).fencingToken).toBe(1);
    expect((await inAudit.inspect('report:monday')).fencingToken).toBe(0);

    const trail = app.get(AuditTrail);
    expect(trail.locks).toBe(app.get(LockService));
    expect(trail.auditLocks).toBe(app.get(getLockServiceToken('audit')));
    expect(await trail.auditLocks.inspect('audit:login')).toMatchObject({ fencingToken: 1 });
    expect(await trail.locks.inspect('audit:login')).toMatchObject({ fencingToken: 0 });
  });

  test('a client passed as a LockClient is used as it is', async () => {
    @Injectable()
    class DailyReport {
      @Locked('report:{0}')
      async build(_day: string): Promise<number> {
        return currentLock()!.fencingToken;
      }
    }
    const client = new LockClient({ store: memoryStore(), owner: 'my-owner' });
    const app = await track(
      startApp({ imports: [LockModule.forRoot({ client })], providers: [DailyReport] }),
    );
    expect(app.get(LockService).client).toBe(client);
    await expect(app.get(DailyReport).build('tuesday')).resolves.toBe(1);
    expect(await client.inspect('report:tuesday')).toMatchObject({ fencingToken: 1 });
  });
});

describe('module defaults', () => {
  test('defaults apply to every @Locked method of the client unless the method overrides them', async () => {
    @Injectable()
    class Jobs {
      runs = 0;

      @Locked('job')
      async run(): Promise<string> {
        this.runs += 1;
        return 'ran';
      }

      @Locked('job', { onLocked: 'throw' })
      async runOrThrow(): Promise<string> {
        this.runs += 1;
        return 'ran';
      }
    }
    const app = await track(
      startApp({
        imports: [
          LockModule.forRoot({ store: memoryStore(), defaults: { onLocked: 'skip', leaseMs: 5000 } }),
        ],
        providers: [Jobs],
      }),
    );
    const jobs = app.get(Jobs);
    const held = await app.get(LockService).acquire('job');
    await expect(jobs.run()).resolves.toBeUndefined();
    await expect(jobs.runOrThrow()).rejects.toMatchObject({ key: 'job' });
    expect(jobs.runs).toBe(0);
    await held.release();
    await expect(jobs.run()).resolves.toBe('ran');
    expect(jobs.runs).toBe(1);
  });
});

describe('client options', () => {
  test('every LockClientOptions key reaches the client forRoot builds, onEvent and localTurnMs included', async () => {
    const events: LockEvent[] = [];
    const app = await track(
      startApp({
        imports: [
          LockModule.forRoot({
            store: memoryStore(),
            leaseMs: 7000,
            pollMs: 80,
            localTurnMs: 400,
            onEvent: (event) => events.push(event),
          }),
        ],
      }),
    );
    const locks = app.get(LockService);
    expect(locks.client.settings).toMatchObject({ leaseMs: 7000, pollMs: 80, localTurnMs: 400 });
    const lock = await locks.acquire('report:events');
    await lock.release();
    expect(events.map((event) => event.type)).toEqual(['acquired', 'released']);
  });
});

describe('LockService', () => {
  test('offers the LockClient API; withLock makes currentLock() available inside', async () => {
    const app = await track(startApp({ imports: [LockModule.forRoot({ store: memoryStore() })] }));
    const locks = app.get(LockService);
    const token = await locks.withLock('manual', async (lock) => {
      expect(currentLock()).toBe(lock);
      expect(await locks.tryAcquire('manual')).toBeNull();
      return lock.fencingToken;
    });
    expect(token).toBe(1);
    const lock = await locks.acquire('manual', { context: 'by hand' });
    expect(await locks.inspect('manual')).toMatchObject({
      state: 'held',
      context: 'by hand',
      fencingToken: 2,
    });
    await locks.release('manual', lock.handle);
    expect((await locks.inspect('manual')).state).toBe('free');
  });

  test('with isGlobal: false, LockService is injectable only where LockModule is imported', async () => {
    @Module({ providers: [AuditTrail] })
    class FeatureModule {}
    await expect(
      startApp({
        imports: [
          LockModule.forRoot({ store: memoryStore(), isGlobal: false }),
          LockModule.forRoot({ name: 'audit', store: memoryStore(), isGlobal: false }),
          FeatureModule,
        ],
      }),
    ).rejects.toThrow(/LockService/);

    @Module({
      imports: [
        LockModule.forRoot({ store: memoryStore(), isGlobal: false }),
        LockModule.forRoot({ name: 'audit', store: memoryStore(), isGlobal: false }),
      ],
      providers: [AuditTrail],
    })
    class ImportingModule {}
    const app = await track(startApp({ imports: [ImportingModule] }));
    expect(app.get(AuditTrail).locks).toBeInstanceOf(LockService);
  });
});

describe('request-scoped providers', () => {
  test('a @Locked method of a request-scoped provider finds its client on each request', async () => {
    @Injectable({ scope: Scope.REQUEST })
    class PerRequestTouch {
      @Locked('touch:{0}')
      async touch(_id: string): Promise<number> {
        return currentLock()!.fencingToken;
      }
    }
    @Controller('touch')
    class TouchController {
      constructor(@Inject(PerRequestTouch) private readonly touches: PerRequestTouch) {}

      @Get(':id')
      async touch(@Param('id') id: string): Promise<{ token: number }> {
        return { token: await this.touches.touch(id) };
      }
    }
    const app = await track(
      startApp({
        imports: [LockModule.forRoot({ store: memoryStore() })],
        controllers: [TouchController],
        providers: [PerRequestTouch],
      }),
    );
    await request(app.getHttpServer()).get('/touch/a').expect(200, { token: 1 });
    await request(app.getHttpServer()).get('/touch/a').expect(200, { token: 2 });
  });
});
