import { keyOfHandle, LockClient } from '@latch/core';
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

Exit codes: 0 released, 2 bad usage or malformed handle, 4 store error, 5 the handle no
longer holds the lock (its lease ended, or it was already released or taken over).`;

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
      await locks.release(key, values.handle);
      ctx.out(`released lock "${key}"`);
      return ExitCode.ok;
    } finally {
      await locks?.close();
      opened.close();
    }
  },
};
