import { parseArgs } from 'node:util';

export interface DemoOptions {
  /** Dashboard port; 0 picks a free one. */
  port: number;
  store: 's3' | 'dynamodb' | 'memory';
  /** Amazon S3 bucket: set means real AWS, unset means the embedded local S3 server. */
  bucket: string | undefined;
  /** Amazon DynamoDB table: set means real AWS, unset means DynamoDB Local. */
  table: string | undefined;
  prefix: string;
  region: string | undefined;
  replicas: number;
  leaseMs: number;
  /** Seconds after "kill" before the launcher starts the replica again; 0 = never. */
  restartAfterSeconds: number;
  help: boolean;
}

/** A bad command line; the message says what to change. */
export class DemoUsageError extends Error {
  override readonly name = 'DemoUsageError';
}

export const USAGE = `Usage: pnpm demo [options]   (or: node dist/launcher.js [options])

  --store s3|dynamodb|memory   lock store (default s3)
                                 s3        the embedded local S3 server, or Amazon S3 with --bucket
                                 dynamodb  DynamoDB Local (needs Java 17+), or Amazon DynamoDB with --table
                                 memory    a memory store in the launcher; needs nothing but Node
  --bucket <name>              use this Amazon S3 bucket (default AWS credentials and region)
  --table <name>               use this Amazon DynamoDB table (partition key "pk", string)
  --prefix <text>              key prefix in the bucket (default "latch-demo/")
  --region <name>              AWS region for --bucket / --table
  --port <n>                   dashboard port (default 4600; 0 picks a free port)
  --replicas <n>               how many replicas to run, 2 to 5 (default 3)
  --lease-ms <n>               lock lease in ms, 1000 to 60000 (default 4000)
  --restart-after <seconds>    restart a killed replica after this long, 0 = never (default 15)
  -h, --help                   show this help`;

/** Parses the launcher's command line; throws DemoUsageError on anything it cannot use. */
export function parseDemoOptions(argv: string[]): DemoOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      // `pnpm demo -- --store memory` may pass the separator through.
      args: argv[0] === '--' ? argv.slice(1) : argv,
      strict: true,
      allowPositionals: false,
      options: {
        store: { type: 'string', default: 's3' },
        bucket: { type: 'string' },
        table: { type: 'string' },
        prefix: { type: 'string', default: 'latch-demo/' },
        region: { type: 'string' },
        port: { type: 'string', default: '4600' },
        replicas: { type: 'string', default: '3' },
        'lease-ms': { type: 'string', default: '4000' },
        'restart-after': { type: 'string', default: '15' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (error) {
    throw new DemoUsageError((error as Error).message);
  }
  const store = values.store as string;
  if (store !== 's3' && store !== 'dynamodb' && store !== 'memory') {
    throw new DemoUsageError(`--store must be s3, dynamodb or memory; got "${store}".`);
  }
  const bucket = values.bucket as string | undefined;
  const table = values.table as string | undefined;
  if (bucket !== undefined && store !== 's3') {
    throw new DemoUsageError(`--bucket only goes with --store s3 (got --store ${store}).`);
  }
  if (table !== undefined && store !== 'dynamodb') {
    throw new DemoUsageError(`--table only goes with --store dynamodb (got --store ${store}).`);
  }
  if (bucket === '' || table === '') throw new DemoUsageError('--bucket and --table need a name.');
  return {
    store,
    bucket,
    table,
    prefix: values.prefix as string,
    region: values.region as string | undefined,
    port: integer('--port', values.port as string, 0, 65_535),
    replicas: integer('--replicas', values.replicas as string, 2, 5),
    leaseMs: integer('--lease-ms', values['lease-ms'] as string, 1_000, 60_000),
    restartAfterSeconds: integer('--restart-after', values['restart-after'] as string, 0, 3_600),
    help: values.help === true,
  };
}

function integer(flag: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw new DemoUsageError(`${flag} must be a whole number from ${min} to ${max}; got "${text}".`);
  }
  return value;
}
