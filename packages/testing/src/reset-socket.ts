import type { Socket } from 'node:net';

/** Closes a socket with a TCP RST, so the peer sees ECONNRESET rather than a clean end. */
export function resetSocket(socket: Socket): void {
  if (socket.destroyed) return;
  try {
    socket.resetAndDestroy();
  } catch {
    // no TCP handle (yet): fall back to a plain destroy
    socket.destroy();
  }
}
