#!/usr/bin/env node
// latch-testing: start the local lock backends (`up`) or prove they work on this machine (`check`).
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { callDynamoDB } from './dynamodb-http.js';
import { startDynamoDBLocal } from './dynamodb-local.js';
import { startRedis } from './redis.js';
import { startS3Server } from './s3/server.js';
import { BACKENDS, type BackendName, ROUND_TRIPS, type RoundTripTarget } from './self-check.js';

const USAGE = `Usage: latch-testing <command> [options]

Local backends for testing Latch locks: an S3-compatible server, DynamoDB Local, redis-server.

Commands:
  up      Start the backends and keep them running until Ctrl-C (SIGINT) or SIGTERM
  check   Start each backend, do one real round trip against it, stop it, report

Run 'latch-testing <command> --help' for a command's options.`;

const UP_USAGE = `Usage: latch-testing up [--s3] [--dynamodb] [--redis] [options]

Starts the selected backends (all three when none is selected), prints their endpoints,
and keeps them running until Ctrl-C (SIGINT) or SIGTERM, then stops them all.

Options:
  --s3                  Start the S3-compatible server
  --dynamodb            Start DynamoDB Local (needs Java 17+)
  --redis               Start redis-server (needs redis-server installed)
  --bucket <name>       Bucket to create on the S3 server (default: locks)
  --table <name>        Lock table to create in DynamoDB Local, string partition key "pk"
                        as dynamoStore() expects (default: locks)
  --s3-port <n>         Fixed ports instead of free ones
  --dynamodb-port <n>
  --redis-port <n>
  --json                Also print the endpoints as one JSON line (the last line of output)
  -h, --help            Show this help`;

const CHECK_USAGE = `Usage: latch-testing check [--s3] [--dynamodb] [--redis]

Starts each selected backend (all three when none is selected), does one real round trip
against it, stops it, and prints one line per backend. Exits 0 when all pass, 1 otherwise.

  s3        create a bucket, then a conditional put (If-None-Match: *) twice: the second must get 412
  dynamodb  create a table, then a conditional PutItem twice: the second must fail its condition
  redis     PING, SET NX twice (the second must be refused), GET

Options:
  --s3, --dynamodb, --redis   Check only these backends
  -h, --help                  Show this help`;

/** A mistake in the command line: reported as one line, exit code 2. */
class UsageError extends Error {
  constructor(
    message: string,
    /** The command whose --help to point at, if any. */
    readonly command?: string,
  ) {
    super(message);
  }
}

interface Running extends RoundTripTarget {
  name: BackendName;
  /** Human-readable address line. */
  line: string;
  json: Record<string, string>;
  stop(): Promise<void>;
}

const SELECT_OPTIONS = {
  s3: { type: 'boolean' },
  dynamodb: { type: 'boolean' },
  redis: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse<T extends NonNullable<ParseArgsConfig['options']>>(
  command: string,
  args: string[],
  options: T,
) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false } as const).values;
  } catch (error) {
    const message = (error as Error).message;
    const unknown = /Unknown option '([^']+)'/.exec(message);
    const first = message.split('. ')[0]!;
    throw new UsageError(
      unknown ? `unknown option '${unknown[1]}'` : first[0]!.toLowerCase() + first.slice(1),
      command,
    );
  }
}

function selected(values: Partial<Record<BackendName, unknown>>): BackendName[] {
  const chosen = BACKENDS.filter((name) => values[name] === true);
  return chosen.length > 0 ? chosen : [...BACKENDS];
}

function portOption(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new UsageError(`--${name} must be a port number (1-65535), got '${value}'`, 'up');
  }
  return port;
}

async function startBackend(
  name: BackendName,
  options: { port?: number; bucket?: string; table?: string },
): Promise<Running> {
  switch (name) {
    case 's3': {
      const s3 = await startS3Server({ port: options.port, bucket: options.bucket });
      const bucket = s3.bucket ?? options.bucket;
      return {
        name,
        endpoint: s3.endpoint,
        port: s3.port,
        line: `${s3.endpoint}${bucket ? `  (bucket: ${bucket})` : ''}`,
        json: { endpoint: s3.endpoint, ...(bucket ? { bucket } : {}) },
        stop: () => s3.stop(),
      };
    }
    case 'dynamodb': {
      const ddb = await startDynamoDBLocal({ port: options.port });
      const { table } = options;
      if (table !== undefined) {
        try {
          await createTable(ddb.endpoint, table);
        } catch (error) {
          await ddb.stop();
          throw error;
        }
      }
      return {
        name,
        endpoint: ddb.endpoint,
        port: ddb.port,
        line: `${ddb.endpoint}  (${table ? `table: ${table}, ` : ''}any region and credentials)`,
        json: { endpoint: ddb.endpoint, ...(table ? { table } : {}) },
        stop: ddb.stop,
      };
    }
    case 'redis': {
      const redis = await startRedis({ port: options.port });
      return {
        name,
        endpoint: redis.url,
        port: redis.port,
        line: redis.url,
        json: { url: redis.url },
        stop: redis.stop,
      };
    }
  }
}

async function up(args: string[]): Promise<number> {
  const values = parse('up', args, {
    ...SELECT_OPTIONS,
    bucket: { type: 'string', default: 'locks' },
    table: { type: 'string', default: 'locks' },
    's3-port': { type: 'string' },
    'dynamodb-port': { type: 'string' },
    'redis-port': { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    console.log(UP_USAGE);
    return 0;
  }
  const ports: Record<BackendName, number | undefined> = {
    s3: portOption('s3-port', values['s3-port']),
    dynamodb: portOption('dynamodb-port', values['dynamodb-port']),
    redis: portOption('redis-port', values['redis-port']),
  };
  const names = selected(values);

  const results = await Promise.allSettled(
    names.map((name) =>
      startBackend(name, { port: ports[name], bucket: values.bucket, table: values.table }),
    ),
  );
  const running = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failures = results.flatMap((r, i) =>
    r.status === 'rejected' ? [[names[i], r.reason] as const] : [],
  );
  if (failures.length > 0) {
    await Promise.allSettled(running.map((r) => r.stop()));
    for (const [name, reason] of failures) {
      console.error(`latch-testing up: ${name} failed to start: ${(reason as Error).message}`);
    }
    return 1;
  }

  for (const r of running) console.log(`${r.name.padEnd(9)} ${r.line}`);
  console.error('latch-testing: backends are up; press Ctrl-C to stop them.');
  if (values.json) console.log(JSON.stringify(Object.fromEntries(running.map((r) => [r.name, r.json]))));

  // The backends do not hold the event loop open on their own; this does, until a signal arrives.
  const keepAlive = setInterval(() => {}, 1 << 30);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(s, () => resolve(s));
  });
  console.error(`latch-testing: ${signal} received, stopping backends...`);
  // A second signal while stopping: give up waiting; the exit hook still kills the children.
  for (const s of ['SIGINT', 'SIGTERM'] as const) process.once(s, () => process.exit(1));
  await Promise.allSettled(running.map((r) => r.stop()));
  clearInterval(keepAlive);
  console.error('latch-testing: stopped.');
  return 0;
}

/**
 * The lock table dynamoStore() expects by default: a string partition key "pk", on demand.
 * DynamoDB Local creates tables ACTIVE at once, so there is nothing to wait for.
 */
async function createTable(endpoint: string, table: string): Promise<void> {
  const created = await callDynamoDB(endpoint, 'CreateTable', {
    TableName: table,
    BillingMode: 'PAY_PER_REQUEST',
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
  });
  if (created.status !== 200) {
    const reason = String(created.body.message ?? created.body.Message ?? JSON.stringify(created.body));
    throw new Error(`creating table "${table}" failed: HTTP ${created.status} ${reason}`);
  }
}

interface CheckResult {
  name: BackendName;
  ok: boolean;
  detail: string;
  startMs?: number;
  roundTripMs?: number;
}

async function checkOne(name: BackendName): Promise<CheckResult> {
  const started = performance.now();
  let running: Running | undefined;
  try {
    running = await startBackend(name, {});
    const startMs = performance.now() - started;
    const detail = await ROUND_TRIPS[name](running);
    return { name, ok: true, detail, startMs, roundTripMs: performance.now() - started - startMs };
  } catch (error) {
    return { name, ok: false, detail: (error as Error).message };
  } finally {
    await running?.stop().catch(() => {});
  }
}

async function check(args: string[]): Promise<number> {
  const values = parse('check', args, SELECT_OPTIONS);
  if (values.help) {
    console.log(CHECK_USAGE);
    return 0;
  }
  console.log('latch-testing check');
  const results = await Promise.all(selected(values).map(checkOne));
  const ms = (n: number | undefined) => `${Math.round(n ?? 0)} ms`.padStart(8);
  for (const r of results) {
    const timing = r.ok ? `start ${ms(r.startMs)}  round trip ${ms(r.roundTripMs)}  ` : '';
    const [first = '', ...more] = r.detail.split('\n');
    console.log(`  ${r.ok ? '✓' : '✗'} ${r.name.padEnd(9)} ${timing}${first}`);
    for (const line of more) console.log(`      ${line}`);
  }
  const failed = results.filter((r) => !r.ok).map((r) => r.name);
  if (failed.length > 0) {
    console.log(`latch-testing check: FAILED (${failed.join(', ')}) — see the ✗ lines above.`);
    return 1;
  }
  console.log(`latch-testing check: all ${results.length} backends OK.`);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'up':
      return up(rest);
    case 'check':
      return check(rest);
    case '-h':
    case '--help':
    case 'help':
      console.log(USAGE);
      return 0;
    case undefined:
      throw new UsageError('missing command: up or check');
    default:
      throw new UsageError(`unknown command '${command}'`);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      const help = error.command ? `latch-testing ${error.command} --help` : 'latch-testing --help';
      console.error(`latch-testing: ${error.message} (see '${help}')`);
      process.exit(2);
    }
    console.error(`latch-testing: ${(error as Error)?.message ?? error}`);
    process.exit(1);
  },
);
