import { LockClient, type LockHolderInfo, type LockInfo } from '@latch/core';
import type { Command } from '../cli-context.js';
import { confirm } from '../confirm.js';
import { describeHolder } from '../describe-holder.js';
import { ExitCode } from '../exit-codes.js';
import { resolveStoreUrl } from '../lock-flags.js';
import { openStore } from '../open-store.js';
import { parseFlagsAndArguments } from '../parse-flags.js';
import { UsageError } from '../usage-error.js';

const help = `Usage: latch force-release <key> [options]

Frees a lock whoever holds it: the operator's way out when a holder is stuck, or a fail-closed
lock has no lease to run out. A holder that is still running loses the lock at its next renewal
(its signal aborts; 'latch run' stops its command and exits 5). The fencing token is kept: the
next holder gets a higher one. A lock taken with --limit is freed of every holder.

On a terminal it first shows the holder and asks:
  Free "deploy/production" held by host-a:123:x7 (deploy #42, token 7)? [y/N]
Anywhere else (a pipeline, a script) it refuses unless --yes is given.

Options:
  --store <url>   s3://bucket/prefix, s3+list://bucket/prefix, dynamodb://table or memory:
                  (default: $LATCH_STORE)
  -y, --yes       Free it without asking
  -h, --help      Show this help

Requests: one read to show the holder, then one read and one conditional write to free it
(s3+list://: a listing, then one delete per object of the holder). A free lock costs the
first read only.

Exit codes: 0 freed, or it was not held (the output says which); 2 bad usage, or nobody to ask
and no --yes; 4 store error.`;

const flags = {
  store: { type: 'string' },
  yes: { type: 'boolean', short: 'y' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const forceReleaseCommand: Command = {
  name: 'force-release',
  summary: 'Free a lock whoever holds it (asks first unless --yes)',
  help,
  async execute(args, ctx) {
    const { values, positionals } = parseFlagsAndArguments('latch force-release', args, flags, 1);
    if (values.help) {
      ctx.out(help);
      return ExitCode.ok;
    }
    const key = positionals[0];
    if (key === undefined || key === '') {
      throw new UsageError("the lock's key is required: latch force-release <key>, as 'latch ls' shows it.");
    }
    const store = resolveStoreUrl(values.store, ctx.env, ', e.g. --store s3://my-bucket/locks.');
    // Refused before any request: a pipeline must not free a lock because nobody could say no.
    if (!values.yes && !ctx.input.isTerminal) {
      throw new UsageError(
        `nobody to ask for a confirmation (stdin is not a terminal): pass --yes to free lock "${key}" without asking.`,
      );
    }
    const opened = await openStore(store, ctx);
    let locks: LockClient | undefined;
    try {
      locks = new LockClient({ store: opened.store, heartbeatMs: false });
      const info = await locks.inspect(key);
      if (info.state === 'free') {
        ctx.out(`lock "${key}" was not held: nothing to free`);
        return ExitCode.ok;
      }
      if (!values.yes && !(await confirm(`Free "${key}" held by ${holdersInBrief(info)}?`, ctx.input))) {
        ctx.err(`latch force-release: lock "${key}" left as it is`);
        return ExitCode.ok;
      }
      if (!(await locks.forceRelease(key))) {
        // Released (or taken over and released) between the read and the write.
        ctx.out(`lock "${key}" was not held anymore: nothing to free`);
        return ExitCode.ok;
      }
      ctx.out(`freed lock "${key}", taken from ${holdersInFull(info)}`);
      return ExitCode.ok;
    } finally {
      await locks?.close();
      opened.close();
    }
  },
};

/** `host-a:1:x (deploy #42, token 7)`, one per holder: what the operator confirms. */
function holdersInBrief(info: LockInfo): string {
  const each = info.holders.map((holder) => {
    const details = [holder.context, `token ${holder.fencingToken}`];
    if (holder.state === 'expired') details.push('lease ended');
    return `${holder.owner} (${details.filter(Boolean).join(', ')})`;
  });
  return each.length === 1 ? each[0]! : `${each.length} holders: ${each.join('; ')}`;
}

/** Every holder as `latch status` words it, with its token: the record of what was taken. */
function holdersInFull(info: LockInfo): string {
  const each = info.holders.map((holder: LockHolderInfo) => {
    const expired = holder.state === 'expired' ? ', already expired' : '';
    return `${describeHolder(holder)}, fencing token ${holder.fencingToken}${expired}`;
  });
  return each.length === 1 ? each[0]! : `${each.length} holders: ${each.join('; ')}`;
}
