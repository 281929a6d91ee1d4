import { type Lock, LockClient } from '@latch/core';
import { acquireReporting } from '../acquire-reporting.js';
import type { Command } from '../cli-context.js';
import { ExitCode } from '../exit-codes.js';
import { githubOutputFile, writeGithubOutputs } from '../github-output.js';
import { acquireFlags, DEFAULT_LEASE, DEFAULT_POLL, resolveAcquireSettings } from '../lock-flags.js';
import { openStore } from '../open-store.js';
import { parseFlags } from '../parse-flags.js';
import { exitCodeForSignal, SignalTrap } from '../signal-trap.js';

const help = `Usage: latch acquire [options]

Acquires the lock and exits, leaving it held, for pipelines that lock in one job and unlock
in a later one. Prints one JSON line:

  {"key":"deploy/production","handle":"latch1....","fencingToken":7,
   "acquiredAt":"2026-01-05T12:01:03.120Z","expiresAt":"2026-01-05T13:01:03.120Z"}

Pass the handle to 'latch release --handle <handle>'. Nobody renews the lease after latch
exits: choose a --lease longer than everything until the release; if the pipeline dies,
the lock frees itself when the lease ends.

Options:
  --store <url>      s3://bucket/prefix, s3+list://bucket/prefix, dynamodb://table or memory:
                     (default: $LATCH_STORE)
  --name <name>      Lock name (default in GitHub Actions: $GITHUB_WORKFLOW/$GITHUB_JOB)
  --lease <dur>      Lease length (default ${DEFAULT_LEASE})
  --wait <dur>       How long to wait for the lock; 0 = one try (default: the lease)
  --poll <dur>       Longest pause between two looks at a held lock (default ${DEFAULT_POLL})
  --context <text>   Who and why, shown to waiters (default in GitHub Actions: the run)
  --limit <n>        How many may hold the lock at once, 1 to 100 (default 1). Every
                     holder of a name must use the same limit (else exit 2); not on
                     s3+list://
  --github-output    Also write key=, handle=, fencing-token=, acquired-at= and expires-at=
                     lines to $GITHUB_OUTPUT (the step's outputs in GitHub Actions)
  -h, --help         Show this help

Exit codes: 0 acquired, 2 bad usage, 3 not acquired within --wait, 4 store error.`;

export const acquireCommand: Command = {
  name: 'acquire',
  summary: 'Acquire the lock and print its handle (release it later with latch release)',
  help,
  async execute(args, ctx) {
    const values = parseFlags('latch acquire', args, {
      ...acquireFlags,
      'github-output': { type: 'boolean' },
    });
    if (values.help) {
      ctx.out(help);
      return ExitCode.ok;
    }
    const settings = resolveAcquireSettings(values, ctx.env);
    const outputFile = values['github-output'] ? githubOutputFile(ctx.env) : undefined;
    const opened = await openStore(settings.store, ctx);
    using signals = new SignalTrap();
    let locks: LockClient | undefined;
    let handedOut = false;
    try {
      // No heartbeat: the lease must outlive this process, until another job releases it.
      locks = new LockClient({
        store: opened.store,
        leaseMs: settings.leaseMs,
        pollMs: settings.pollMs,
        heartbeatMs: false,
      });
      let lock: Lock;
      try {
        lock = await acquireReporting(
          locks,
          { ...settings, command: 'latch acquire', signal: signals.signal },
          ctx.err,
        );
      } catch (error) {
        if (!signals.received) throw error;
        ctx.err(`latch acquire: ${signals.received} received while waiting for lock "${settings.name}"`);
        return exitCodeForSignal(signals.received);
      }
      const acquiredAt = new Date(lock.acquiredAt).toISOString();
      const expiresAt = lock.expiresAt === null ? null : new Date(lock.expiresAt).toISOString();
      if (outputFile) {
        writeGithubOutputs(outputFile, {
          key: lock.key,
          handle: lock.handle,
          'fencing-token': String(lock.fencingToken),
          'acquired-at': acquiredAt,
          'expires-at': expiresAt ?? '',
        });
      }
      ctx.out(
        JSON.stringify({
          key: lock.key,
          handle: lock.handle,
          fencingToken: lock.fencingToken,
          acquiredAt,
          expiresAt,
        }),
      );
      handedOut = true;
      return ExitCode.ok;
    } finally {
      // close() releases what the client holds: never once the handle is out, since the lock
      // must stay held after latch exits. Before that (a timeout, a signal, an unwritable
      // $GITHUB_OUTPUT), it waits for an attempt still in flight and frees what it got.
      if (!handedOut) await locks?.close();
      opened.close();
    }
  },
};
