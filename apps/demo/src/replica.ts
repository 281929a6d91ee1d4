import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { LockClient } from '@latch/core';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import express from 'express';
import { billingModule } from './replica/billing.module.js';
import { chargeRoute } from './replica/charge-route.js';
import { connectStore } from './replica/connect-store.js';
import { startCustomerSyncWorker } from './replica/customer-sync-worker.js';
import { exportRoute } from './replica/export-route.js';
import { campaignForLeadership } from './replica/leadership.js';
import { LedgerClient } from './replica/ledger-client.js';
import { toWireEvent } from './replica/wire-event.js';
import type { LauncherMessage, ReplicaMessage } from './shared/ipc-messages.js';
import type { ReplicaConfig } from './shared/replica-config.js';

/**
 * One replica of the billing service, forked by the launcher: a Nest app (cron + @Locked) on
 * an Express instance that also serves the locked charge route and the export route (at most
 * two exports per customer), a BullMQ worker, and a leadership campaign, all sharing one
 * LockClient whose events go to the launcher.
 */
const config = JSON.parse(process.argv[2] ?? '') as ReplicaConfig;
const send = (message: ReplicaMessage): void => {
  if (process.connected) process.send?.(message);
};

const owner = `${config.name}:pid${process.pid}`;
const { store, close: closeStore } = connectStore(config.store);
const locks = new LockClient({
  store,
  owner,
  leaseMs: config.leaseMs,
  // Waiters in other processes notice a release within a quarter second.
  pollMs: 250,
  onEvent: (event) => send({ type: 'lock-event', event: toWireEvent(event) }),
});
const ledger = new LedgerClient(config.ledgerUrl, owner);

const server = express();
server.use(chargeRoute(locks, ledger));
server.use(exportRoute(locks, ledger));
const app = await NestFactory.create(billingModule(locks, ledger), new ExpressAdapter(server), {
  logger: ['error', 'warn'],
});
await app.listen(0, '127.0.0.1');
const { port } = app.getHttpServer().address() as AddressInfo;

const worker = config.redisUrl ? startCustomerSyncWorker(config.redisUrl, locks, ledger) : undefined;
worker?.on('error', (error) => send({ type: 'log', level: 'warn', message: `worker: ${error.message}` }));
const leadership = campaignForLeadership(locks, config.name);

let stopping: Promise<void> | undefined;
/** Resigns leadership and releases what it holds, so the others take over without waiting for a lease. */
function shutdown(): Promise<void> {
  stopping ??= (async () => {
    await Promise.allSettled([leadership.stop(), worker?.close()]);
    await app.close().catch(() => undefined);
    closeStore();
    process.exit(0);
  })();
  return stopping;
}

process.on('message', (message: LauncherMessage) => {
  if (message.type === 'shutdown') void shutdown();
});
// Ctrl-C in a terminal reaches every process of the group; the launcher coordinates the stop.
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());
// Never outlive the launcher.
process.on('disconnect', () => void shutdown());

send({ type: 'ready', port, owner });
