import { LockClient } from '@latch/core';
import type { Command } from '../cli-context.js';
import { ExitCode } from '../exit-codes.js';
import { openStore } from '../open-store.js';
import { parseFlags } from '../parse-flags.js';
import { parseStoreUrl } from '../store-url.js';
import { UsageError } from '../usage-error.js';

const help = `Usage: latch release --handle <handle> [options]

Releases a lock acquired by 'latch acquire', possibly in another job or on another machine.

Options:
  --handle <handle>  The handle printed by latch acquire (required)
  --store <url>      The store it was acquired in (default: $LATCH_STORE)
  --name <name>      The lock's name; optional, the handle already names it (when given,
                     it must match, and the release costs one request less); required
                     with s3+list:// stores
  -h, --help         Show this help

Exit codes: 0 released, 2 bad usage or malformed handle, 4 store error, 5 the handle no
longer holds the lock (its lease ended, or it was already released or taken over).`;

export const releaseCommand: Command = {
  name: 'release',
  summary: 'Release a lock by the handle latch acquire printed',
  help,
  async execute(args, ctx) {
    const values = parseFlags('latch release', args, {
      store: { type: 'string' },
      name: { type: 'string' },
      handle: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    });
    if (values.help) {
      ctx.out(help);
      return ExitCode.ok;
    }
    if (!values.handle) {
      throw new UsageError('--handle is required: pass the "handle" that latch acquire printed.');
    }
    const storeText = values.store ?? ctx.env.LATCH_STORE;
    if (!storeText) {
      throw new UsageError('--store is required (or set LATCH_STORE): the store the lock is in.');
    }
    const store = parseStoreUrl(storeText);
    if (store.kind === 's3+list' && values.name === undefined) {
      // The list strategy cannot resume a handle, which is how the name is learnt otherwise.
      throw new UsageError(
        'with an s3+list:// store, pass the lock name too: --name <name> --handle <handle>.',
      );
    }
    const opened = await openStore(store, ctx.env);
    try {
      const locks = new LockClient({ store: opened.store, heartbeatMs: false });
      let key: string;
      if (values.name !== undefined) {
        key = values.name;
        await locks.release(key, values.handle);
      } else {
        // Core releases by (key, handle); resuming learns the key from the handle itself.
        const lock = await locks.resume(values.handle, { heartbeatMs: false });
        key = lock.key;
        await lock.release();
      }
      ctx.out(`released lock "${key}"`);
      return ExitCode.ok;
    } finally {
      opened.close();
    }
  },
};
