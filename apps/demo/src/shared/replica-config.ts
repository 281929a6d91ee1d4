import type { StoreSpec } from './store-spec.js';

/** Everything a replica process needs, passed as JSON in its first command-line argument. */
export interface ReplicaConfig {
  /** 'replica-1', 'replica-2', ... */
  name: string;
  store: StoreSpec;
  /** Base URL of the ledger the charges and jobs write to (served by the launcher). */
  ledgerUrl: string;
  /** redis:// URL for the BullMQ worker, or null when Redis was skipped. */
  redisUrl: string | null;
  leaseMs: number;
}

export const QUEUE_NAME = 'sync-customer';
export const LEADER_KEY = 'billing/leader';
export const REPORT_KEY = 'reports/nightly';
/** Every 5 seconds (six fields: seconds first), so the demo shows a run per tick. */
export const REPORT_CRON = '*/5 * * * * *';
export const customerKey = (customerId: string): string => `customer/${customerId}`;

/** How many exports of one customer may run at once, across every replica. */
export const EXPORT_LIMIT = 2;
export const exportKey = (customerId: string): string => `export/customer-${customerId}`;

/** How many may hold `key` at once: the exports' limit, 1 for every other lock of the demo. */
export function lockLimit(key: string): number {
  return key.startsWith('export/') ? EXPORT_LIMIT : 1;
}
