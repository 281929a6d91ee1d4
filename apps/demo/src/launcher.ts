// `pnpm demo`: starts the lock store, Redis, the dashboard and ledger, and the replicas;
// prints the dashboard URL; stops every child process and server on Ctrl-C.
import { Queue, QueueEvents } from 'bullmq';
import { startDashboardServer } from './launcher/dashboard-server.js';
import { DemoHub } from './launcher/demo-hub.js';
import { DemoUsageError, parseDemoOptions, USAGE } from './launcher/demo-options.js';
import { startRedisBackend } from './launcher/redis-backend.js';
import { ReplicaSupervisor } from './launcher/replica-supervisor.js';
import { startStoreBackend } from './launcher/store-backend.js';
import { guide } from './launcher/terminal-guide.js';
import { QUEUE_NAME, type ReplicaConfig } from './shared/replica-config.js';
import { describeStore } from './shared/store-spec.js';

// The AWS SDK warns on Node 20 that its 2027 versions will need Node 22: not news for a demo.
// Set before any client exists; the replicas inherit it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

let options: ReturnType<typeof parseDemoOptions>;
try {
  options = parseDemoOptions(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof DemoUsageError)) throw error;
  console.error(`latch demo: ${error.message}\n\n${USAGE}`);
  process.exit(2);
}
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}

const cleanups: Array<() => Promise<void> | void> = [];
let stopping = false;
async function stopEverything(exitCode: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    console.log('\nStopping the replicas, the queue, the store and the dashboard...');
    // Newest first: replicas before the servers they use.
    for (const cleanup of cleanups.reverse()) {
      await Promise.resolve()
        .then(cleanup)
        .catch((error) => console.error(`while stopping: ${(error as Error).message}`));
    }
    console.log('Stopped.');
    process.exit(exitCode);
  }
  return new Promise<never>(() => {});
}
process.on('SIGINT', () => void stopEverything(0));
process.on('SIGTERM', () => void stopEverything(0));

try {
  console.log('Starting the Latch demo...');
  const storeBackend = await startStoreBackend(options);
  cleanups.push(() => storeBackend.stop());
  const redis = await startRedisBackend();
  if (redis.server) cleanups.push(() => redis.server.stop());
  const notices = [...storeBackend.notices, ...(redis.notice ? [redis.notice] : [])];
  for (const notice of notices) console.log(`\n${notice}`);

  let queue: { queue: Queue; events: QueueEvents } | undefined;
  if (redis.server) {
    const connection = { host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null };
    queue = {
      queue: new Queue(QUEUE_NAME, { connection }),
      events: new QueueEvents(QUEUE_NAME, { connection }),
    };
    const { queue: q, events } = queue;
    cleanups.push(async () => {
      await Promise.allSettled([events.close(), q.close()]);
    });
    await events.waitUntilReady();
  }

  const store = describeStore(storeBackend.spec);
  const hub = new DemoHub({
    store,
    leaseMs: options.leaseMs,
    notices,
    memoryHost: storeBackend.memoryHost,
    queue,
  });
  const dashboard = await startDashboardServer(hub, options.port, (line) => console.log(line));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        hub.close();
        dashboard.server.close(() => resolve());
        dashboard.server.closeAllConnections();
      }),
  );

  const configs: ReplicaConfig[] = Array.from({ length: options.replicas }, (_, i) => ({
    name: `replica-${i + 1}`,
    store: storeBackend.spec,
    ledgerUrl: dashboard.url,
    redisUrl: redis.server?.url ?? null,
    leaseMs: options.leaseMs,
  }));
  const supervisor = new ReplicaSupervisor(
    new URL('./replica.js', import.meta.url),
    configs,
    options.restartAfterSeconds * 1000,
    {
      onMessage: (replica, message, child) => hub.onReplicaMessage(replica, message, child),
      onExit: (replica, owner) => hub.onReplicaExit(replica, owner),
      onChange: () => hub.replicasChanged(),
      log: (line) => console.error(line),
    },
  );
  hub.attach(supervisor);
  cleanups.push(() => supervisor.stopAll());
  await supervisor.startAll();

  const processes = [
    { name: 'launcher', pid: process.pid },
    ...supervisor.list().map((r) => ({ name: r.name, pid: r.pid ?? 0 })),
    ...storeBackend.processes,
    ...(redis.server ? [{ name: 'redis-server', pid: redis.server.pid }] : []),
  ];
  console.log(guide(dashboard.url, store, processes, queue !== undefined));
} catch (error) {
  console.error(`latch demo could not start: ${(error as Error).message}`);
  await stopEverything(1);
}
