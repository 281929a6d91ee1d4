import type { LockClient } from '@latch/core';
import { LockModule } from '@latch/nest';
import { type DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { LedgerClient } from './ledger-client.js';
import { NightlyReportService } from './nightly-report.service.js';

/** The Nest side of a replica: the scheduler and the locked nightly report. */
@Module({})
export class BillingModule {}

/** BillingModule wired to this replica's LockClient (shared with the Express route and the worker). */
export function billingModule(locks: LockClient, ledger: LedgerClient): DynamicModule {
  return {
    module: BillingModule,
    imports: [LockModule.forRoot({ client: locks }), ScheduleModule.forRoot()],
    providers: [{ provide: LedgerClient, useValue: ledger }, NightlyReportService],
  };
}
