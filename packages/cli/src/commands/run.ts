import { type Lock, LockClient, LockLostError } from '@latch/core';
import { acquireReporting } from '../acquire-reporting.js';
import type { CliContext, Command } from '../cli-context.js';
import { describeFailure } from '../describe-failure.js';
import { isoTime } from '../describe-holder.js';
import { ExitCode } from '../exit-codes.js';
import { checkCommandExists } from '../find-command.js';
import { acquireFlags, DEFAULT_LEASE, DEFAULT_POLL, resolveAcquireSettings } from '../lock-flags.js';
import { openStore } from '../open-store.js';
import { parseFlags } from '../parse-flags.js';
import { exitCodeForSignal, SignalTrap } from '../signal-trap.js';
import { CommandStartError, type RunningCommand, spawnCommand } from '../spawn-command.js';
import { UsageError } from '../usage-error.js';

/** After the lock is lost, how long the command gets to stop on SIGTERM before SIGKILL. */
const KILL_AFTER_MS = 10_000;

const help = `Usage: latch run [options] -- <command> [args...]

Runs <command> while holding the lock: waits for the lock (saying on stderr who holds it),
starts the command (directly, without a shell), renews the lease in the background while it
runs, and releases the lock when it exits. SIGINT, SIGTERM and SIGHUP are passed on to the
command, and latch exits with the command's exit code (128 + the signal's number if a signal
ended it). The command gets the lock's fencing token in LATCH_FENCING_TOKEN.

If the lock is lost while the command runs (renewals kept failing, or someone else took it),
latch says so on stderr, sends SIGTERM to the command (SIGKILL ${KILL_AFTER_MS / 1000}s later if it is still
running) and exits with code 5.

Options:
  --store <url>      s3://bucket/prefix, s3+list://bucket/prefix, dynamodb://table or memory:
                     (default: $LATCH_STORE)
  --name <name>      Lock name (default in GitHub Actions: $GITHUB_WORKFLOW/$GITHUB_JOB)
  --lease <dur>      Lease length, renewed every third of it while the command runs (default ${DEFAULT_LEASE})
  --wait <dur>       How long to wait for the lock; 0 = one try (default: the lease)
  --poll <dur>       Longest pause between two looks at a held lock (default ${DEFAULT_POLL})
  --context <text>   Who and why, shown to waiters (default in GitHub Actions: the run)
  --limit <n>        How many may hold the lock at once, 1 to 100 (default 1). Every
                     holder of a name must use the same limit (else exit 2); not on
                     s3+list://
  -h, --help         Show this help

Durations: 500ms, 90s, 15m, 1h, 1h30m.

Exit codes: the command's own once it ran, or 5 if the lock was lost while it ran; before
that 2 bad usage, 127 command not found (126 not executable; both checked before the lock
is taken), 3 not acquired within --wait, 4 store error, 128 + signo when interrupted while
waiting.

Examples:
  latch run --store s3://my-bucket/locks --name deploy/production --lease 10m -- ./deploy.sh prod
  latch run --store s3://my-bucket/locks --name deploy/staging --limit 2 -- ./deploy.sh staging
    (at most two staging deploys at once; a third waits for one of them to finish)`;

export const runCommand: Command = {
  name: 'run',
  summary: 'Run a command while holding the lock',
  help,
  async execute(args, ctx) {
    const split = args.indexOf('--');
    const flagArgs = split === -1 ? args : args.slice(0, split);
    const command = split === -1 ? [] : args.slice(split + 1);
    const values = parseFlags('latch run', flagArgs, acquireFlags);
    if (values.help) {
      ctx.out(help);
      return ExitCode.ok;
    }
    if (command.length === 0) {
      throw new UsageError(
        'no command given; put it after "--", e.g. latch run --name deploy -- ./deploy.sh.',
      );
    }
    const settings = resolveAcquireSettings(values, ctx.env);
    try {
      // A typo is reported now, not after taking (or waiting for) the lock.
      checkCommandExists(command[0]!, ctx.env);
    } catch (error) {
      if (!(error instanceof CommandStartError)) throw error;
      ctx.err(`latch run: ${error.message}; the lock was not taken`);
      return error.exitCode;
    }
    const opened = await openStore(settings.store, ctx);
    using signals = new SignalTrap();
    let locks: LockClient | undefined;
    try {
      locks = new LockClient({ store: opened.store, leaseMs: settings.leaseMs, pollMs: settings.pollMs });
      let lock: Lock;
      try {
        lock = await acquireReporting(
          locks,
          { ...settings, command: 'latch run', signal: signals.signal },
          ctx.err,
        );
      } catch (error) {
        if (!signals.received) throw error;
        ctx.err(
          `latch run: ${signals.received} received while waiting for lock "${settings.name}"; the command was not run`,
        );
        return exitCodeForSignal(signals.received);
      }
      return await runHoldingLock(lock, command, signals, ctx);
    } finally {
      // After a timeout or a signal, an attempt may still be in flight: close() waits for it and
      // releases the lock if it landed. After the command, the lock was released already (if
      // that release failed, close() tries once more).
      await locks?.close();
      opened.close();
    }
  },
};

async function runHoldingLock(
  lock: Lock,
  command: string[],
  signals: SignalTrap,
  ctx: CliContext,
): Promise<number> {
  let child: RunningCommand;
  try {
    child = spawnCommand(command, { ...ctx.env, LATCH_FENCING_TOKEN: String(lock.fencingToken) });
  } catch (error) {
    await lock.release().catch(() => undefined);
    throw error;
  }
  signals.forwardTo((signal) => child.kill(signal));

  let lost: unknown;
  let killTimer: NodeJS.Timeout | undefined;
  const onLost = () => {
    lost = lock.signal.reason;
    const why = lost instanceof Error ? lost.message : String(lost);
    ctx.err(`latch run: ${why}; stopping the command with SIGTERM`);
    child.kill('SIGTERM');
    killTimer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
  };
  if (lock.signal.aborted) onLost();
  else lock.signal.addEventListener('abort', onLost, { once: true });

  let exitCode: number;
  try {
    exitCode = await child.exited;
  } catch (error) {
    await lock.release().catch(() => undefined);
    if (error instanceof CommandStartError) {
      ctx.err(`latch run: ${error.message}`);
      return error.exitCode;
    }
    throw error;
  } finally {
    clearTimeout(killTimer);
    lock.signal.removeEventListener('abort', onLost);
  }

  if (lost !== undefined) {
    ctx.err(
      `latch run: exiting with ${ExitCode.lockLost} because the lock was lost (the command exited with ${exitCode})`,
    );
    return ExitCode.lockLost;
  }
  try {
    await lock.release();
  } catch (error) {
    if (error instanceof LockLostError) {
      ctx.err(`latch run: ${error.message}; the command finished (exit ${exitCode}) but not under the lock`);
      return ExitCode.lockLost;
    }
    // The command finished under the lock; the lease frees the lock by itself when it ends.
    const until = lock.expiresAt === null ? '' : ` at ${isoTime(lock.expiresAt)}`;
    const why = describeFailure(error, ctx).message;
    ctx.err(
      `latch run: warning: could not release lock "${lock.key}" (${why}); it frees itself when its lease ends${until}`,
    );
  }
  return exitCode;
}
