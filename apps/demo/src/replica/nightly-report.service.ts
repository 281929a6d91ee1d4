import { currentLock, Locked } from '@latch/nest';
import { Inject, Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { REPORT_CRON, REPORT_KEY } from '../shared/replica-config.js';
import { LedgerClient } from './ledger-client.js';

/** Stand-in for building the report. */
const REPORT_WORK_MS = 800;

/**
 * The "nightly report", scheduled every few seconds so the demo shows it: every replica's
 * scheduler fires, one replica runs it, the others skip (@Locked with onLocked 'skip').
 * lockAtLeastMs keeps the lock for most of the period, so a replica whose timer fires a little
 * late finds it still held instead of running the report a second time.
 */
@Injectable()
export class NightlyReportService {
  constructor(@Inject(LedgerClient) private readonly ledger: LedgerClient) {}

  @Cron(REPORT_CRON, { name: 'nightly-report' })
  @Locked(REPORT_KEY, { onLocked: 'skip', lockAtLeastMs: 3_000 })
  async buildNightlyReport(): Promise<void> {
    const lock = currentLock();
    await this.ledger.during(
      REPORT_KEY,
      lock!.fencingToken,
      () => new Promise((r) => setTimeout(r, REPORT_WORK_MS)),
    );
  }
}
