import { type LockStore, memoryStore } from '@latch/core';
import type { StoreCall, StoreReply } from '../shared/ipc-messages.js';

/**
 * The launcher's side of `--store memory`: one memoryStore() in this process, shared by every
 * replica through their IPC channels. Node runs each call to completion in turn, so each
 * conditional write is atomic, exactly as in a single process.
 */
export class MemoryStoreHost {
  readonly store: LockStore = memoryStore();

  async answer(call: StoreCall): Promise<StoreReply> {
    try {
      switch (call.op) {
        case 'read':
          return { ok: true, value: await this.store.read(call.key) };
        case 'write':
          return { ok: true, value: await this.store.write(call.key, call.record, call.condition) };
        case 'delete':
          return { ok: true, value: await this.store.delete(call.key, call.version) };
      }
    } catch (error) {
      return { ok: false, message: error instanceof Error ? error.message : String(error) };
    }
  }
}
