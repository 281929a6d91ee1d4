import { fencingTokenOfHandle, keyOfHandle, LockClient, LockNotHeldError } from '@latch/core';
import type { Command } from '../cli-context.js';
import { ExitCode } from '../exit-codes.js';
import { resolveStoreUrl, storeFlags } from '../lock-flags.js';
import { openStore } from '../open-store.js';
import { parseFlags } from '../parse-flags.js';
import { UsageError } from '../usage-error.js';

const help = `Usage: latch release --handle <handle> [options]

Releases a lock acquired by 'latch acquire', possibly in another job or on another machine.
The handle names the lock, so --name is not needed (on every store, s3+list:// included).

Options:
  --handle <handle>  The handle printed by latch acquire (required)
  --store <url>      The store it was acquired in (default: $LATCH_STORE)
  --name <name>      The lock's name; optional, the handle already names it (when given,
                     it must match)
  -h, --help         Show this help

Releasing a handle that was released already (a re-run of the job that released it) exits 0
and says so, as long as no one has acquired the lock since. On s3+list:// a release leaves
nothing behind, so there it cannot be told from a lease that ran out: exit 5.

Exit codes: 0 released (or released already), 2 bad usage or malformed handle, 4 store error,
5 the handle no longer holds the lock (its lease ended, or the lock was taken over since).`;

export const releaseCommand: Command = {
  name: 'release',
  summary: 'Release a lock by the handle latch acquire printed',
  help,
  async execute(args, ctx) {
    const values = parseFlags('latch release', args, { ...storeFlags, handle: { type: 'string' } });
    if (values.help) {
      ctx.out(help);
      return ExitCode.ok;
    }
    if (!values.handle) {
      throw new UsageError('--handle is required: pass the "handle" that latch acquire printed.');
    }
    const store = resolveStoreUrl(values.store, ctx.env, ': the store the lock is in.');
    // The handle names its lock (a malformed one is refused here, before any request); a
    // --name that does not match it is refused by release() itself.
    const key = values.name ?? keyOfHandle(values.handle);
    const opened = await openStore(store, ctx);
    let locks: LockClient | undefined;
    try {
      locks = new LockClient({ store: opened.store, heartbeatMs: false });
      try {
        await locks.release(key, values.handle);
      } catch (error) {
        // The list strategy keeps nothing after a release: a free lock there may as well have expired.
        const canTell = store.kind !== 's3+list';
        if (
          !(
            error instanceof LockNotHeldError &&
            canTell &&
            (await releasedAlready(locks, key, values.handle))
          )
        )
          throw error;
        ctx.out(`lock "${key}" was released already by this handle; nothing to do`);
        return ExitCode.ok;
      }
      ctx.out(`released lock "${key}"`);
      return ExitCode.ok;
    } finally {
      await locks?.close();
      opened.close();
    }
  },
};

/**
 * True when the lock is free and its last acquisition was this handle's: it was released after
 * this handle acquired it, and nobody has acquired it since. A lease that merely ran out still
 * shows its holder (and its release succeeds); one taken over has a higher token.
 */
async function releasedAlready(locks: LockClient, key: string, handle: string): Promise<boolean> {
  const token = fencingTokenOfHandle(handle);
  const info = await locks.inspect(key);
  if (info.state === 'free' && info.fencingToken > token) {
    throw new LockNotHeldError(
      key,
      `it was acquired again since this handle's acquisition (fencing token ${info.fencingToken}, this handle's ${token}), so whether this one was released or its lease ran out cannot be told`,
    );
  }
  return info.state === 'free' && info.fencingToken === token;
}
