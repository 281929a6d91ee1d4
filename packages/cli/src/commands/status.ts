import { LockClient, type LockInfo } from '@latch/core';
import type { Command } from '../cli-context.js';
import { isoTime } from '../describe-holder.js';
import { formatDuration } from '../duration.js';
import { ExitCode } from '../exit-codes.js';
import { resolveStoreSettings, storeFlags } from '../lock-flags.js';
import { type HolderTimes, lockJson } from '../lock-json.js';
import { openStore } from '../open-store.js';
import { parseFlags } from '../parse-flags.js';

const help = `Usage: latch status [options]

Shows whether the lock is free or held, and if held: by whom, with what context, since when
and until when. A lock taken with --limit lists every holder.

Options:
  --store <url>   s3://bucket/prefix, s3+list://bucket/prefix, dynamodb://table or memory:
                  (default: $LATCH_STORE)
  --name <name>   Lock name (default in GitHub Actions: $GITHUB_WORKFLOW/$GITHUB_JOB)
  --json          Print one JSON line: {"key","state","fencingToken","owner","context",
                  "acquiredAt","expiresAt"} (times in ISO 8601; holder fields only when held);
                  a lock held under a --limit also gets "limit" and "holders" (each with
                  owner, context, acquiredAt, expiresAt, state and fencingToken)
  -h, --help      Show this help

States: held; expired (the holder's lease ended and nobody has taken the lock over yet: the
next acquire gets it); free.

Exit codes: 0 shown (whatever the state), 2 bad usage, 4 store error.`;

export const statusCommand: Command = {
  name: 'status',
  summary: 'Show who holds the lock, with what context, until when',
  help,
  async execute(args, ctx) {
    const values = parseFlags('latch status', args, { ...storeFlags, json: { type: 'boolean' } });
    if (values.help) {
      ctx.out(help);
      return ExitCode.ok;
    }
    const settings = resolveStoreSettings(values, ctx.env);
    const opened = await openStore(settings.store, ctx);
    let locks: LockClient | undefined;
    try {
      locks = new LockClient({ store: opened.store });
      const info = await locks.inspect(settings.name);
      if (values.json) ctx.out(JSON.stringify(lockJson(info)));
      else for (const line of describeInfo(info, Date.now())) ctx.out(line);
      return ExitCode.ok;
    } finally {
      await locks?.close();
      opened.close();
    }
  },
};

function describeInfo(info: LockInfo, now: number): string[] {
  if (info.state === 'free') {
    const last = info.fencingToken > 0 ? ` (last fencing token ${info.fencingToken})` : '';
    return [`lock "${info.key}": free${last}`];
  }
  if (info.limit === 1) {
    return [`lock "${info.key}": ${info.state}`, ...describeHolderLines(info, info.fencingToken, now)];
  }
  // A key with a limit: every holder, each with its own lease and fencing token.
  const lines = [
    `lock "${info.key}": ${info.state}, ${info.holders.length} of at most ${info.limit} holders`,
  ];
  for (const holder of info.holders) lines.push(...describeHolderLines(holder, holder.fencingToken, now));
  return lines;
}

function describeHolderLines(holder: HolderTimes, fencingToken: number, now: number): string[] {
  const lines = [`  holder:        ${holder.owner}`];
  if (holder.context !== undefined) lines.push(`  context:       ${holder.context}`);
  if (holder.acquiredAt !== undefined) {
    lines.push(
      `  since:         ${isoTime(holder.acquiredAt)} (${formatDuration(Math.max(0, now - holder.acquiredAt))} ago)`,
    );
  }
  if (holder.expiresAt === null) lines.push('  lease ends:    never (fail-closed lock)');
  else if (holder.expiresAt !== undefined) {
    const left = holder.expiresAt - now;
    const relative = left >= 0 ? `in ${formatDuration(left)}` : `${formatDuration(-left)} ago`;
    lines.push(`  lease ends:    ${isoTime(holder.expiresAt)} (${relative})`);
  }
  lines.push(`  fencing token: ${fencingToken}`);
  return lines;
}
