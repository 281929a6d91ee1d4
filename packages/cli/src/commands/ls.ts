import type { Command } from '../cli-context.js';
import { ExitCode } from '../exit-codes.js';
import { describeUnreadable, LockLister } from '../list-locks.js';
import { resolveStoreUrl } from '../lock-flags.js';
import { lockJson } from '../lock-json.js';
import { lockTable, noLocksLine } from '../lock-table.js';
import { openStore } from '../open-store.js';
import { parseFlagsAndArguments } from '../parse-flags.js';

const help = `Usage: latch ls [prefix] [options]

Lists every lock in the store (only those whose key starts with prefix, when given), sorted
by key: its state, holder, context, since when it is held, how much of the lease is left and
its fencing token. A lock taken with --limit has one row per holder; a free lock shows the
last fencing token handed out.

  KEY                STATE    HOLDER         CONTEXT     SINCE    LEASE LEFT  TOKEN
  deploy/production  held     host-a:123:x7  deploy #42  3m ago   12m         7
  deploy/staging     free     -              -           -        -           3

Options:
  --store <url>   s3://bucket/prefix, s3+list://bucket/prefix, dynamodb://table or memory:
                  (default: $LATCH_STORE)
  --json          Print one JSON array, one object per lock as 'latch status --json' prints
                  it ([] when there is none)
  -h, --help      Show this help

Requests: those of listing the store once. s3:// and s3+list://: one ListObjectsV2 per 1,000
objects under the prefix, then one GetObject per lock (s3+list://: per held lock); dynamodb://:
one Scan per 1 MB of the whole table (DynamoDB cannot look up a prefix of keys). The cost grows
with the number of locks.

Exit codes: 0 listed (even none), 2 bad usage, 4 store error.`;

const flags = {
  store: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const lsCommand: Command = {
  name: 'ls',
  summary: 'List the locks under a prefix: state, holder, context, lease left, token',
  help,
  async execute(args, ctx) {
    const { values, positionals } = parseFlagsAndArguments('latch ls', args, flags, 1);
    if (values.help) {
      ctx.out(help);
      return ExitCode.ok;
    }
    const [prefix] = positionals;
    const store = resolveStoreUrl(values.store, ctx.env, ', e.g. --store s3://my-bucket/locks.');
    const opened = await openStore(store, ctx);
    let lister: LockLister | undefined;
    try {
      lister = new LockLister(opened.store);
      const { locks, unreadable } = await lister.list(prefix);
      if (values.json) ctx.out(JSON.stringify(locks.map(lockJson)));
      else if (locks.length === 0) ctx.out(noLocksLine(prefix));
      else for (const line of lockTable(locks, Date.now())) ctx.out(line);
      for (const line of describeUnreadable(unreadable)) ctx.err(`latch ls: ${line}`);
      return ExitCode.ok;
    } finally {
      await lister?.close();
      opened.close();
    }
  },
};
