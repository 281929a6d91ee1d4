import { type LockStore, LockStoreError, memoryStore } from '@latch/core';
import type { LauncherMessage, ReplicaMessage, StoreCall, StoreReply } from '../shared/ipc-messages.js';

/**
 * A LockStore whose records live in the launcher process: `--store memory` keeps one
 * memoryStore() there, and every replica sends its reads and conditional writes over the IPC
 * channel. It is a transport only; the compare-and-swap happens in the launcher's memory store,
 * one call at a time, and all lock semantics stay in core.
 */
export function ipcStore(): LockStore {
  if (!process.send) throw new Error('ipcStore() needs an IPC channel: run this process with fork().');
  // Key and size rules are those of the memory store the launcher hosts.
  const rules = memoryStore();
  const pending = new Map<
    number,
    { resolve: (reply: StoreReply) => void; reject: (error: unknown) => void }
  >();
  let nextId = 1;

  process.on('message', (message: LauncherMessage) => {
    if (message.type !== 'store-reply') return;
    pending.get(message.id)?.resolve(message.reply);
    pending.delete(message.id);
  });
  process.on('disconnect', () => {
    for (const [id, call] of pending) {
      call.reject(
        new LockStoreError('The launcher hosting the memory store went away.', {
          retryable: true,
          maybeApplied: true,
        }),
      );
      pending.delete(id);
    }
  });

  const send = async (call: StoreCall): Promise<unknown> => {
    const id = nextId++;
    const reply = await new Promise<StoreReply>((resolve, reject) => {
      pending.set(id, { resolve, reject });
      const message: ReplicaMessage = { type: 'store-call', id, call };
      process.send!(message, (error: Error | null) => {
        if (!error) return;
        pending.delete(id);
        reject(new LockStoreError(`Could not reach the launcher: ${error.message}`, { retryable: true }));
      });
    });
    if (!reply.ok)
      throw new LockStoreError(`Memory store in the launcher failed: ${reply.message}`, { retryable: false });
    return reply.value;
  };

  return {
    kind: 'memory (via launcher)',
    maxRecordBytes: rules.maxRecordBytes,
    checkKey: (key) => rules.checkKey(key),
    recordBytes: (record) => rules.recordBytes(record),
    read: async (key) => (await send({ op: 'read', key })) as Awaited<ReturnType<LockStore['read']>>,
    write: async (key, record, condition) =>
      (await send({ op: 'write', key, record, condition })) as Awaited<ReturnType<LockStore['write']>>,
    delete: async (key, version) =>
      (await send({ op: 'delete', key, version })) as Awaited<ReturnType<LockStore['delete']>>,
  };
}
