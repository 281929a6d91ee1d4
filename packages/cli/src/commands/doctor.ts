import type { StoreVerdict } from '@latch/core';
import { describeVerdict, verifyStore } from '@latch/core';
import type { Command } from '../cli-context.js';
import { parseDuration } from '../duration.js';
import { ExitCode } from '../exit-codes.js';
import { resolveStoreUrl } from '../lock-flags.js';
import { openStore } from '../open-store.js';
import { parseFlagsAndArguments } from '../parse-flags.js';
import { UsageError } from '../usage-error.js';

const help = `Usage: latch doctor [store-url] [options]

Checks that a store does what Latch's locks rely on, with a short probe under the key prefix
"__latch-verify__/" that it removes again: exactly one of five racing create-if-absent writes
wins; a replace with a stale version is refused and one with the current version applies; every
write changes the version; a read sees the write before it; for DynamoDB, the one-request claim
refuses a held lock; and (told, not needed for locks) a delete with a stale version is refused.
It also compares this machine's clock with the store's (the HTTP Date of its answer). For
s3+list:// it checks the listings instead: in key order, and current right after an upload and
a delete. Run it
once before a pipeline's first lock on a store that is not AWS's own (MinIO, R2, Ceph, GCS...).

Options:
  --store <url>          s3://bucket/prefix, s3+list://bucket/prefix or dynamodb://table
                         (default: the argument, then $LATCH_STORE)
  --tolerance <duration> How far apart clocks may be, as your clients' clock.toleranceMs
                         (default 0s: Latch's default)
  --untrusted-clock      Your clients use clock: 'untrusted' (the clock offset is then told only)
  --json                 Print one JSON object: {"store","safe","checks":[{"name","outcome",
                         "safety","detail"}],"clock":{"offsetMs":{"low","high"},"roundTripMs",
                         "mode","toleranceMs","beyondTolerance","detail"} or null,"requests"}
  -h, --help             Show this help

Requests: 14 on s3://, 17 on dynamodb://, 13 on s3+list://, once.

Exit codes: 0 safe (a clock warning included), 2 bad usage, 3 unsafe (a check failed or was
refused: do not lock on this store), 4 unreachable (or missing bucket or table, access denied).`;

const flags = {
  store: { type: 'string' },
  tolerance: { type: 'string' },
  'untrusted-clock': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const doctorCommand: Command = {
  name: 'doctor',
  summary: 'Check that a store honours what locks rely on, and its clock',
  help,
  async execute(args, ctx) {
    const { values, positionals } = parseFlagsAndArguments('latch doctor', args, flags, 1);
    if (values.help) {
      ctx.out(help);
      return ExitCode.ok;
    }
    if (values.store !== undefined && positionals[0] !== undefined) {
      throw new UsageError('give the store once: as the argument or as --store, not both.');
    }
    const url = resolveStoreUrl(
      values.store ?? positionals[0],
      ctx.env,
      ', e.g. latch doctor s3://my-bucket/locks.',
    );
    const toleranceMs =
      values.tolerance === undefined
        ? 0
        : parseDuration('--tolerance', values.tolerance, { allowZero: true });
    const opened = await openStore(url, ctx);
    try {
      const verdict = await verifyStore(opened.store, {
        clock: { mode: values['untrusted-clock'] ? 'untrusted' : 'trusted', toleranceMs },
      });
      if (values.json) ctx.out(JSON.stringify({ ...verdict, clock: verdict.clock ?? null }));
      else for (const line of describe(verdict)) ctx.out(line);
      return verdict.safe ? ExitCode.ok : ExitCode.unsafeStore;
    } finally {
      opened.close();
    }
  },
};

function describe(verdict: StoreVerdict): string[] {
  const summary = verdict.safe
    ? `safe: Latch can lock on this ${verdict.store} store (${verdict.requests} requests).`
    : `unsafe: do not lock on this ${verdict.store} store; two holders of one lock are possible (${verdict.requests} requests).`;
  return [...describeVerdict(verdict).split('\n'), summary];
}
