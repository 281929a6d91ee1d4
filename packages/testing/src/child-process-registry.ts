import type { ChildProcess } from 'node:child_process';

/**
 * Every backend process we start is tracked here so that it dies with the Node process that
 * started it, even when the caller never calls `stop()`: a synchronous kill on `exit` (normal end,
 * `process.exit()`, uncaught exception) and on SIGINT/SIGTERM/SIGHUP when nobody else handles them.
 * A SIGKILL of the parent cannot be intercepted; nothing here can clean up after that.
 *
 * Children are spawned `detached`, i.e. as leaders of their own process group, so the group kill
 * also reaches anything a wrapper script (a custom `javaPath`, say) started underneath.
 */
const children = new Set<ChildProcess>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
let installed = false;

/** Sends `signal` to the child's process group (falls back to the child alone). Never throws. */
function signalChild(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

function killAll(signal: NodeJS.Signals): void {
  for (const child of children) signalChild(child, signal);
}

function onSignal(signal: NodeJS.Signals): void {
  // Another listener means the application handles this signal itself (e.g. a graceful shutdown
  // that calls stop()); then we leave the children alone and rely on the `exit` hook.
  if (process.listenerCount(signal) > 1) return;
  killAll('SIGKILL');
  for (const s of SIGNALS) process.removeListener(s, onSignal);
  // Re-raise so the process ends the way it would have without our listener.
  process.kill(process.pid, signal);
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', () => killAll('SIGKILL'));
  for (const s of SIGNALS) process.on(s, onSignal);
}

/** Registers a freshly spawned child; it is dropped from the registry once it has exited. */
export function trackChild(child: ChildProcess): void {
  install();
  children.add(child);
  child.once('exit', () => children.delete(child));
}

/** Stops a child: SIGTERM to its group, SIGKILL after `graceMs`; resolves once it has exited. */
export async function stopChild(child: ChildProcess, graceMs = 3_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  signalChild(child, 'SIGTERM');
  const timer = setTimeout(() => signalChild(child, 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
