// Helpers shared by the packed-apps runner and the apps' checks: child processes that are
// always stopped, HTTP calls, waiting, and the environment an app runs with on a Node line.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export { sleep };

/** A check's verdict: thrown by a check when what it saw is wrong. */
export class CheckFailure extends Error {}

export function expect(condition, message) {
  if (!condition) throw new CheckFailure(message);
}

/** Every process started here whose group may still be running, by pid (each leads its own group). */
const running = new Map();

/** Set once the run is being cut short: nothing new is started then. */
let stopping = false;

/** Graceful stops to try first when the run is cut short (e.g. the backends' own shutdown). */
const cleanups = new Set();

/** Registers `fn` to run if the run is cut short; returns a function that unregisters it. */
export function onAbort(fn) {
  cleanups.add(fn);
  return () => cleanups.delete(fn);
}

/**
 * Stops everything this run started that is still running: SIGTERM to each process group but
 * the backends (`late`), up to 5 s for them to exit; then the registered graceful stops (the
 * backends' own shutdown, at most 5 s); then SIGKILL to whatever is left, reported.
 */
export async function stopAll() {
  stopping = true;
  const early = [...running].filter(([, info]) => !info.late);
  for (const [pid] of early) signalGroup(pid, 'SIGTERM');
  for (let waited = 0; waited < 5000 && early.some(([, info]) => !info.exited); waited += 100) {
    await sleep(100);
  }
  const graceful = [...cleanups].map((fn) =>
    Promise.resolve()
      .then(fn)
      .catch(() => {}),
  );
  cleanups.clear();
  await Promise.race([Promise.all(graceful), sleep(5000)]);
  for (const [pid, { label, exited }] of running) {
    signalGroup(pid, 'SIGKILL'); // for a leader that exited: whatever is left of its group
    running.delete(pid);
    if (!exited) process.stderr.write(`packed-apps: killed ${pid} (${label}): still running after SIGTERM\n`);
  }
}

const repoRoot = new URL('../../', import.meta.url).pathname;
/** npm settings a CI or user may give through the environment; pnpm's own are dropped. */
const KEPT_NPM_SETTINGS = new Set([
  'npm_config_registry',
  'npm_config_cache',
  'npm_config_cafile',
  'npm_config_userconfig',
]);

/**
 * The environment of a user's shell: without what pnpm or npm put there for the script running
 * this (npm_lifecycle_*, pnpm's npm_config_globalconfig, ...), and without the repo's own
 * node_modules/.bin on PATH, so that nothing of the workspace leaks into the apps.
 */
export function cleanEnv(extra = {}) {
  const env = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(name) && !KEPT_NPM_SETTINGS.has(name.toLowerCase())) continue;
    if (/^(pnpm_|INIT_CWD$|NODE_OPTIONS$|TURBO_)/i.test(name)) continue;
    env[name] = value;
  }
  env.PATH = (env.PATH ?? '')
    .split(':')
    .filter((dir) => dir && !dir.startsWith(repoRoot) && !dir.includes('/pnpm/dist/node-gyp-bin'))
    .join(':');
  return { ...env, ...extra };
}

/** The environment for running on a Node line: its `node` first on PATH (for bins and npx). */
export function lineEnv(line, extra = {}) {
  const env = cleanEnv(extra);
  env.PATH = `${dirname(line.node)}:${env.PATH}`;
  return env;
}

/**
 * Starts a process in its own process group, collecting its output. The handle's `exited`
 * settles with `{ code, signal }`; `stop()` sends SIGTERM, then SIGKILL to the group.
 * `reap()` ends whatever is left of the group.
 */
export function start(command, args, { cwd, env, label = command, reap = true, late = false } = {}) {
  if (stopping) throw new CheckFailure(`not started (${label}): the run is stopping`);
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const info = { label, late, exited: false };
  const handle = {
    child,
    stdout: '',
    stderr: '',
    label,
    listeners: new Set(),
    done: false,
    result: undefined,
  };
  if (child.pid !== undefined) running.set(child.pid, info);
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    handle.stdout += chunk;
    for (const listener of handle.listeners) listener();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    handle.stderr += chunk;
  });
  handle.exited = new Promise((resolve) => {
    child.on('error', (error) => {
      handle.stderr += `\n${error.message}`;
      info.exited = true;
      handle.done = true;
      handle.result = { code: null, signal: null, error };
      running.delete(child.pid);
      resolve({ code: null, signal: null, error });
    });
    child.on('close', (code, signal) => {
      info.exited = true;
      handle.done = true;
      handle.result = { code, signal };
      // The group may still hold grandchildren (npx -> latch -> node): end them too, unless
      // the caller wants to see first whether they are gone (`reap: false`; then stopAll does).
      if (reap) {
        running.delete(child.pid);
        signalGroup(child.pid, 'SIGKILL');
      }
      for (const listener of handle.listeners) listener();
      resolve({ code, signal });
    });
  });
  handle.reap = () => {
    running.delete(child.pid);
    signalGroup(child.pid, 'SIGKILL');
  };

  /** Resolves with the first stdout line matching `pattern`; rejects on exit or after `timeoutMs`. */
  handle.waitForLine = (pattern, timeoutMs) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        handle.listeners.delete(look);
        reject(
          new CheckFailure(`${label}: no line matching ${pattern} within ${timeoutMs} ms${tail(handle)}`),
        );
      }, timeoutMs);
      function look() {
        const line = handle.stdout.split('\n').find((l) => pattern.test(l));
        if (line !== undefined) {
          clearTimeout(timer);
          handle.listeners.delete(look);
          resolve(line);
        } else if (handle.done) {
          clearTimeout(timer);
          handle.listeners.delete(look);
          const { code, signal } = handle.result;
          reject(
            new CheckFailure(`${label} exited (code ${code}, signal ${signal}) before ready${tail(handle)}`),
          );
        }
      }
      handle.listeners.add(look);
      look();
    });

  /** SIGTERM to the process group, SIGKILL after `graceMs`; resolves with how it ended. */
  handle.stop = async (graceMs = 5000) => {
    if (handle.done) return { ...handle.result, killed: false };
    signalGroup(child.pid, 'SIGTERM');
    const timer = sleep(graceMs).then(() => 'timeout');
    if ((await Promise.race([handle.exited, timer])) === 'timeout') {
      signalGroup(child.pid, 'SIGKILL');
      return { ...(await handle.exited), killed: true };
    }
    return { ...(await handle.exited), killed: false };
  };
  return handle;
}

function signalGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** The last lines of a process's output for a failure message, led by its first error line. */
export function tail(handle, count = 12) {
  const all = `${handle.stdout}\n${handle.stderr}`.trim().split('\n');
  const last = all.slice(-count);
  const error = errorLine(all);
  const shown = error && !last.includes(error) ? [error, '...', ...last] : last;
  return shown.join('').trim() ? `\n    ${shown.join('\n    ')}` : '';
}

/** The line that says what went wrong ("Error [ERR_…]: …", "TypeError: …", "error TS2307: …"). */
export function errorLine(lines) {
  return (
    lines.find((l) => /^\s*(\w*Error|Error \[\w+\])\b.*:/.test(l)) ??
    lines.find((l) => /\b(error TS\d+|ERR_[A-Z_]+)/.test(l))
  );
}

/** Runs a command to its end (killed after `timeoutMs`); resolves with its output and exit. */
export async function run(command, args, { cwd, env, timeoutMs = 120_000, label } = {}) {
  const began = Date.now();
  const handle = start(command, args, { cwd, env, label: label ?? `${command} ${args.join(' ')}` });
  const timer = sleep(timeoutMs).then(() => 'timeout');
  let timedOut = false;
  if ((await Promise.race([handle.exited, timer])) === 'timeout') {
    timedOut = true;
    await handle.stop(1000);
  }
  const { code, signal } = await handle.exited;
  return { code, signal, timedOut, stdout: handle.stdout, stderr: handle.stderr, ms: Date.now() - began };
}

/** One HTTP request with fetch; the body is parsed as JSON when it is JSON. */
export async function http(method, url, { timeoutMs = 10_000 } = {}) {
  const response = await fetch(url, { method, signal: AbortSignal.timeout(timeoutMs) });
  const text = await response.text();
  let body = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, body };
}

/**
 * POSTs to `url` twice at once, for one lock: one must get it (200), the other a 423 problem+json
 * "locked" answer with a Retry-After of at least 1 s. `app` is the server's handle, for the output
 * a failure shows. Resolves with the 200 answer, the 423 answer and the Retry-After.
 */
export async function expectOneLockedOut(url, app) {
  const pair = await Promise.all([http('POST', url), http('POST', url)]);
  const statuses = pair.map((r) => r.status).sort();
  expect(
    statuses[0] === 200 && statuses[1] === 423,
    `concurrent POSTs answered ${statuses.join(' and ')}, expected 200 and 423: ${JSON.stringify(pair.map((r) => r.body))}${tail(app)}`,
  );
  const done = pair.find((r) => r.status === 200);
  const locked = pair.find((r) => r.status === 423);
  const retryAfter = Number(locked.headers.get('retry-after'));
  expect(retryAfter >= 1, `423 without a Retry-After of at least 1 (${locked.headers.get('retry-after')})`);
  expect(
    locked.headers.get('content-type')?.startsWith('application/problem+json') &&
      locked.body?.type === 'urn:latch:problem:locked',
    `423 is not a problem+json "locked" answer: ${locked.headers.get('content-type')} ${JSON.stringify(locked.body)}`,
  );
  return { done, locked, retryAfter };
}

/** Calls `probe` until it returns a truthy value; throws after `timeoutMs` with `what`. */
export async function waitFor(what, probe, { timeoutMs = 10_000, intervalMs = 100 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await probe();
    if (last) return last;
    if (Date.now() > deadline) throw new CheckFailure(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function listening(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Runs async tasks with at most `limit` at a time; resolves when all have settled. */
export async function pool(tasks, limit) {
  const queue = [...tasks];
  const workers = Array.from({ length: Math.min(limit, queue.length) }, async () => {
    while (queue.length > 0) await queue.shift()();
  });
  await Promise.all(workers);
}

export function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * The pids of processes holding a listening TCP socket on `port` (Linux /proc): used only to
 * end a server this run started (through a bin that should have stopped it) and that outlived it.
 */
export function listenersOf(port) {
  const inodes = new Set();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const row of readFileSync(table, 'utf8').trim().split('\n').slice(1)) {
      const cols = row.trim().split(/\s+/);
      const localPort = Number.parseInt(cols[1].split(':').pop(), 16);
      if (localPort === port && cols[3] === '0A') inodes.add(cols[9]);
    }
  }
  const pids = [];
  if (inodes.size === 0) return pids;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        if (inode && inodes.has(inode)) {
          pids.push(Number(pid));
          break;
        }
      }
    } catch {
      // exited meanwhile, or not ours to read
    }
  }
  return pids;
}
