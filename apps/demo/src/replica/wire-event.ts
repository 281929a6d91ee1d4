import type { LockEvent } from '@latch/core';
import type { WireLockEvent } from '../shared/ipc-messages.js';

/** Core's LockEvent in a form that survives the JSON IPC channel. */
export function toWireEvent(event: LockEvent): WireLockEvent {
  if (event.type === 'lost') {
    const { error, ...rest } = event;
    return { ...rest, error: error.message };
  }
  return event as WireLockEvent;
}
