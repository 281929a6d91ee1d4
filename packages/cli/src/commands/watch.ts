import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from '../cli-context.js';
import { isoTime } from '../describe-holder.js';
import { formatDuration, parseDuration } from '../duration.js';
import { ExitCode } from '../exit-codes.js';
import { describeUnreadable, type Listing, LockLister } from '../list-locks.js';
import { resolveStoreUrl } from '../lock-flags.js';
import { lockTable, noLocksLine } from '../lock-table.js';
import { openStore } from '../open-store.js';
import { parseFlagsAndArguments } from '../parse-flags.js';
import { exitCodeForSignal, SignalTrap } from '../signal-trap.js';
import { UsageError } from '../usage-error.js';

const DEFAULT_INTERVAL = '2s';
/** Cursor to the top left, then clear the screen: each refresh redraws the whole table. */
const CLEAR_SCREEN = '\u001b[H\u001b[2J';

const help = `Usage: latch watch [prefix] [options]

Shows 'latch ls' again and again until interrupted (Ctrl-C). On a terminal it redraws the
table in place, like watch or top; otherwise (a pipe, a file, a CI log) it prints each
refresh as a timestamped snapshot, followed by an empty line:

  2026-01-05T12:01:03Z: 2 locks under "deploy/"
  KEY                STATE  HOLDER         CONTEXT     SINCE   LEASE LEFT  TOKEN
  ...

Options:
  --store <url>      s3://bucket/prefix, s3+list://bucket/prefix, dynamodb://table or memory:
                     (default: $LATCH_STORE)
  --interval <dur>   Pause between the end of one refresh and the start of the next
                     (default ${DEFAULT_INTERVAL})
  --count <n>        Stop after n refreshes (exit 0), for scripts and tests; default: never
  -h, --help         Show this help

Requests: those of 'latch ls' once per refresh, never two refreshes at once: at most one
listing of the store per --interval plus the time the listing itself takes.

Exit codes: 0 after --count refreshes, 2 bad usage, 4 store error (a failed refresh ends the
watch), 128 + n when ended by signal n (Ctrl-C: 130, SIGTERM: 143).`;

const flags = {
  store: { type: 'string' },
  interval: { type: 'string' },
  count: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const watchCommand: Command = {
  name: 'watch',
  summary: "Refresh 'latch ls' until interrupted, in place on a terminal",
  help,
  async execute(args, ctx) {
    const { values, positionals } = parseFlagsAndArguments('latch watch', args, flags, 1);
    if (values.help) {
      ctx.out(help);
      return ExitCode.ok;
    }
    const [prefix] = positionals;
    const intervalMs = parseDuration('--interval', values.interval ?? DEFAULT_INTERVAL);
    const count = values.count === undefined ? undefined : parseCount(values.count);
    const store = resolveStoreUrl(values.store, ctx.env, ', e.g. --store s3://my-bucket/locks.');
    const opened = await openStore(store, ctx);
    using signals = new SignalTrap();
    let lister: LockLister | undefined;
    try {
      lister = new LockLister(opened.store);
      const show = ctx.outputIsTerminal ? redraw(intervalMs, prefix) : printSnapshot(prefix);
      for (let refresh = 1; ; refresh++) {
        const listing = await lister.list(prefix, signals.signal);
        for (const line of show(listing, Date.now())) ctx.out(line);
        // On a terminal the frame shows them; in a log they go with the other warnings.
        if (!ctx.outputIsTerminal) {
          for (const line of describeUnreadable(listing.unreadable)) ctx.err(`latch watch: ${line}`);
        }
        if (refresh === count) return ExitCode.ok;
        await sleep(intervalMs, undefined, { signal: signals.signal });
      }
    } catch (error) {
      // Ctrl-C is how a watch usually ends: no message, the shell's code for the signal.
      if (signals.received) return exitCodeForSignal(signals.received);
      throw error;
    } finally {
      await lister?.close();
      opened.close();
    }
  },
};

type Show = (listing: Listing, now: number) => string[];

/** A terminal: the whole screen, headed like watch(1), records that cannot be read at the bottom. */
function redraw(intervalMs: number, prefix: string | undefined): Show {
  return ({ locks, unreadable }, now) => {
    const title = `Every ${formatDuration(intervalMs)}: latch ls${prefix ? ` ${prefix}` : ''}  ${isoTime(now)}`;
    const table = locks.length > 0 ? lockTable(locks, now) : [noLocksLine(prefix)];
    const warnings = describeUnreadable(unreadable);
    return [`${CLEAR_SCREEN}${title}`, '', ...table, ...(warnings.length > 0 ? ['', ...warnings] : [])];
  };
}

/** Anything else: a snapshot per refresh, each line once, readable in a log. */
function printSnapshot(prefix: string | undefined): Show {
  return ({ locks }, now) => {
    const under = prefix ? ` under "${prefix}"` : '';
    const count = `${locks.length} ${locks.length === 1 ? 'lock' : 'locks'}`;
    const rows = locks.length === 0 ? [] : lockTable(locks, now);
    return [`${isoTime(now)}: ${count}${under}`, ...rows, ''];
  };
}

/** `--count <n>`: a whole number of refreshes, at least 1. */
function parseCount(text: string): number {
  const count = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(count >= 1 && Number.isSafeInteger(count))) {
    throw new UsageError(
      `--count must be a whole number of refreshes, 1 or more, got ${JSON.stringify(text)}; e.g. --count 3.`,
    );
  }
  return count;
}
