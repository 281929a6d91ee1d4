// One Nest 12 application, compiled twice by the apps' own tsc: as ES modules (nest-esm,
// module nodenext) and as CommonJS (nest-cjs, module commonjs, i.e. node10 resolution, where
// core's subpaths resolve through its typesVersions). It locks a route (onLocked 'throw': a
// second request for the same key gets 423) and a cron job (onLocked 'skip'), and exposes what
// the cron did under its lock. It also takes a lock by hand and answers a held one with
// `lockErrorToHttp` from `@latch/core/http`, and shows the cron's stored record with the record
// codec of `@latch/core/store`, so that both subpaths load at run time in both module systems.
import 'reflect-metadata';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import { s3Store } from '@latch/core';
import { type LockHttpAnswer, lockErrorToHttp } from '@latch/core/http';
import {
  decodeRecord,
  encodeRecord,
  type LockRecord,
  type LockStore,
  type VersionedRecord,
} from '@latch/core/store';
import { currentLock, Locked, LockModule, LockService } from '@latch/nest';
import {
  Controller,
  Get,
  HttpCode,
  HttpException,
  Inject,
  Injectable,
  Module,
  Param,
  Post,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cron, CronExpression, ScheduleModule } from '@nestjs/schedule';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** How long a locked request keeps its lock, so that a concurrent one finds it held. */
const HOLD_MS = 1500;

@Injectable()
export class Jobs {
  @Locked('job:{0}', { onLocked: 'throw' })
  async run(id: string): Promise<{ id: string; fencingToken: number }> {
    const lock = currentLock()!;
    await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
    lock.signal.throwIfAborted();
    return { id, fencingToken: lock.fencingToken };
  }
}

@Injectable()
export class Ticker {
  runs = 0;
  lastToken = 0;

  @Cron(CronExpression.EVERY_SECOND)
  @Locked('cron/tick', { onLocked: 'skip' })
  async tick(): Promise<void> {
    const lock = currentLock();
    if (!lock) throw new Error('the cron job ran without its lock');
    this.runs += 1;
    this.lastToken = lock.fencingToken;
  }
}

@Controller()
export class AppController {
  constructor(
    @Inject(Jobs) private readonly jobs: Jobs,
    @Inject(Ticker) private readonly ticker: Ticker,
    @Inject(LockService) private readonly locks: LockService,
  ) {}

  @Post('jobs/:id/run')
  @HttpCode(200)
  async run(@Param('id') id: string): Promise<{ id: string; fencingToken: number }> {
    return this.jobs.run(id);
  }

  @Get('cron')
  async cron(): Promise<{ runs: number; lastToken: number; lock: { state: string; fencingToken: number } }> {
    const { state, fencingToken } = await this.locks.inspect('cron/tick');
    return { runs: this.ticker.runs, lastToken: this.ticker.lastToken, lock: { state, fencingToken } };
  }

  /** A lock taken by hand; a held one is answered the way Latch's HTTP helpers say, from here. */
  @Post('exports/:id')
  @HttpCode(200)
  async export(@Param('id') id: string): Promise<{ id: string; fencingToken: number }> {
    try {
      return await this.locks.withLock(
        `export/${id}`,
        async (lock) => {
          await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
          return { id, fencingToken: lock.fencingToken };
        },
        { waitMs: 0 },
      );
    } catch (error) {
      const answer: LockHttpAnswer | undefined = lockErrorToHttp(error);
      if (answer) throw new HttpException({ ...answer.body, answeredBy: 'app' }, answer.status);
      throw error;
    }
  }

  /** The cron's lock record as the store keeps it, through the store kit's record codec. */
  @Get('cron/record')
  async record(): Promise<{ token: number; sameAfterCodec: boolean; bytes: number }> {
    const stored: VersionedRecord | null = await store.read('cron/tick');
    if (!stored) throw new HttpException('no record for cron/tick', 404);
    const text = encodeRecord(stored.record);
    const decoded: LockRecord = decodeRecord('cron/tick', text);
    return {
      token: stored.record.token,
      sameAfterCodec: decoded.token === stored.record.token && decoded.writeId === stored.record.writeId,
      bytes: store.recordBytes(decoded),
    };
  }
}

const s3 = new S3Client({ region: env('AWS_REGION'), endpoint: env('S3_ENDPOINT'), forcePathStyle: true });
const store: LockStore = s3Store({ client: s3, bucket: env('LOCK_BUCKET'), prefix: env('LOCK_PREFIX') });

@Module({
  imports: [
    ScheduleModule.forRoot(),
    LockModule.forRoot({
      store,
      leaseMs: 10_000,
    }),
  ],
  controllers: [AppController],
  providers: [Jobs, Ticker],
})
export class AppModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  await app.listen(0, '127.0.0.1');
  const { port } = (app.getHttpServer() as Server).address() as AddressInfo;
  const format = typeof require === 'function' && typeof module === 'object' ? 'commonjs' : 'esm';
  console.log(`READY ${JSON.stringify({ port, format, node: process.version })}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
