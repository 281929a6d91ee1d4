import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** True when nothing accepts TCP connections on 127.0.0.1:port (refused or reset right away). */
export function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/**
 * Waits until the port refuses connections. A killed multi-threaded process (a JVM) can show as a
 * zombie while its other threads are still being torn down and its sockets are still open.
 */
export async function eventuallyRefuses(port: number, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await refusesConnections(port))) {
    if (Date.now() >= deadline) return false;
    await sleep(50);
  }
  return true;
}

/**
 * True while the process exists and is not a zombie (a zombie has exited; only its entry remains).
 * A zombie leader whose other threads are still exiting counts as alive: it may still hold sockets.
 */
export function isAlive(pid: number): boolean {
  const stat = statOf(pid);
  if (stat === undefined) return false;
  if (stat.state !== 'Z') return true;
  try {
    return readdirSync(`/proc/${pid}/task`).length > 1;
  } catch {
    return false;
  }
}

/** Waits until none of `pids` is alive; resolves to the ones still alive after `timeoutMs`. */
export async function waitUntilDead(pids: number[], timeoutMs = 5_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  while (pids.some(isAlive) && Date.now() < deadline) await sleep(50);
  return pids.filter(isAlive);
}

/** Live children of `parentPid` whose command line matches `pattern`, from /proc. */
export function childrenMatching(parentPid: number, pattern: RegExp): { pid: number; cmd: string }[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .flatMap((pid) => {
      const stat = statOf(pid);
      if (!stat || stat.ppid !== parentPid || stat.state === 'Z') return [];
      const cmd = readSafe(`/proc/${pid}/cmdline`).replaceAll('\0', ' ');
      return pattern.test(cmd) ? [{ pid, cmd }] : [];
    });
}

function statOf(pid: number): { state: string; ppid: number } | undefined {
  if (!existsSync(`/proc/${pid}`)) return undefined;
  // Format: "pid (comm) state ppid ..."; comm may contain spaces or parentheses, so split after the last ')'.
  const text = readSafe(`/proc/${pid}/stat`);
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  if (fields.length < 2) return undefined;
  return { state: fields[0]!, ppid: Number(fields[1]) };
}

function readSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
