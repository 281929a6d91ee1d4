import type { LockRecord, VersionedRecord, WriteCondition, WriteOutcome } from '@latch/core/store';

/**
 * A lock event as it crosses the IPC channel: core's LockEvent with the `lost` error reduced
 * to its message (errors do not survive JSON).
 */
export interface WireLockEvent {
  type: 'acquired' | 'renewed' | 'released' | 'lost' | 'waiting' | 'contended';
  key: string;
  owner: string;
  at: number;
  fencingToken?: number;
  expiresAt?: number | null;
  context?: string;
  reason?: 'busy' | 'timeout' | 'aborted';
  holder?: { owner: string; context?: string | undefined; acquiredAt: number; expiresAt: number | null };
  error?: string;
}

/** A store call from a replica to the memory store the launcher hosts. */
export type StoreCall =
  | { op: 'read'; key: string }
  | { op: 'write'; key: string; record: LockRecord; condition: WriteCondition }
  | { op: 'delete'; key: string; version: string };

export type StoreReply =
  | { ok: true; value: VersionedRecord | null | WriteOutcome }
  | { ok: false; message: string };

/** Replica → launcher. */
export type ReplicaMessage =
  | { type: 'ready'; port: number; owner: string }
  | { type: 'lock-event'; event: WireLockEvent }
  | { type: 'store-call'; id: number; call: StoreCall }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string };

/** Launcher → replica. */
export type LauncherMessage = { type: 'store-reply'; id: number; reply: StoreReply } | { type: 'shutdown' };
