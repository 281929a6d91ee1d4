import { S3Client } from '@aws-sdk/client-s3';
import { s3Store } from '@latch/core';
import { currentLock, Locked, LockModule, LockService } from '@latch/nest';
import { Controller, Get, HttpCode, Inject, Injectable, Module, Param, Post } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Cron, CronExpression, ScheduleModule } from '@nestjs/schedule';

@Injectable()
export class InvoiceService {
  readonly ledger: string[] = [];

  // One payment per invoice at a time across every replica; a second one is refused at once.
  @Locked('invoice:{0}', { onLocked: 'throw' })
  async pay(invoiceId: string): Promise<string> {
    const lock = currentLock()!;
    // Stop if the lock was lost, and send the fencing token with every write, so that a
    // late write from a replica that lost its lock can be refused downstream.
    lock.signal.throwIfAborted();
    this.ledger.push(`${invoiceId} paid under token ${lock.fencingToken}`);
    return `paid ${invoiceId} (token ${lock.fencingToken})`;
  }

  // An export is a heavy query: at most 3 per customer at once across every replica, each
  // holding a lock of its own. A fourth is refused at once (HTTP 429 with Retry-After).
  @Locked('export:{0}', { limit: 3, onLocked: 'throw' })
  async export(customerId: string): Promise<string> {
    return `exported ${customerId} (token ${currentLock()!.fencingToken})`;
  }
}

@Injectable()
export class ReportJob {
  runs = 0;

  // Every replica fires this cron: one runs it, the others skip. lockAtLeastMs keeps the lock
  // for a minute, so a replica whose clock is a few seconds late does not run it again.
  @Cron(CronExpression.EVERY_HOUR)
  @Locked('reports/hourly', { onLocked: 'skip', lockAtLeastMs: 60_000 })
  async build(): Promise<void> {
    this.runs += 1;
  }
}

@Controller('invoices')
export class InvoiceController {
  constructor(
    @Inject(InvoiceService) private readonly invoices: InvoiceService,
    @Inject(LockService) private readonly locks: LockService,
  ) {}

  // While another request pays invoice 42, this answers 423 Locked with Retry-After.
  @Post(':id/pay')
  @HttpCode(200)
  async pay(@Param('id') id: string): Promise<{ result: string }> {
    return { result: await this.invoices.pay(id) };
  }

  @Get('export/:customer')
  async export(@Param('customer') customer: string): Promise<{ result: string }> {
    return { result: await this.invoices.export(customer) };
  }

  // LockService: the lock client's API, for code that locks or looks by hand.
  @Get(':id/lock')
  async lock(@Param('id') id: string): Promise<{ state: string; fencingToken: number }> {
    const { state, fencingToken } = await this.locks.inspect(`invoice:${id}`);
    return { state, fencingToken };
  }
}

@Module({
  imports: [
    ConfigModule.forRoot(),
    ScheduleModule.forRoot(),
    LockModule.forRootAsync({
      imports: [ConfigModule],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => {
        // S3_ENDPOINT is only set for an S3-compatible server (local runs, tests).
        const endpoint = config.get<string>('S3_ENDPOINT');
        const client = new S3Client({
          region: config.getOrThrow<string>('AWS_REGION'),
          ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
        });
        return {
          store: s3Store({ client, bucket: config.getOrThrow<string>('LOCK_BUCKET'), prefix: 'locks/' }),
          leaseMs: 30_000,
        };
      },
    }),
  ],
  controllers: [InvoiceController],
  providers: [InvoiceService, ReportJob],
})
export class AppModule {}
