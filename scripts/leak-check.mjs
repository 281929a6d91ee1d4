// Finds processes the test suite started and left behind: local backends (redis-server,
// DynamoDB Local's JVM), headless Chromium, and Node processes running this workspace's code
// (demo replicas, CLI runs, chaos and queue workers). Linux only: it reads /proc; elsewhere it
// reports nothing.
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** A redis-server on 127.0.0.1, as our launcher starts it (redis retitles itself to its address). */
const REDIS_SIGNATURE = /^redis-server 127\.0\.0\.1:\d+/;
/** The profile folder playwright gives every Chromium it launches. */
const CHROMIUM_SIGNATURE = /playwright_chromiumdev_profile/;
/** turbo's background daemon is started on purpose and outlives a run. */
const KEEP = /\bturbo\b.*\bdaemon\b/;

function commandLine(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return ''; // gone meanwhile, or not ours to read
  }
}

/** Processes started from this workspace or by its test backends, as `Map<pid, command line>`. */
export function suiteProcesses(root) {
  const found = new Map();
  if (!existsSync('/proc')) return found;
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const cmd = commandLine(pid);
    if (!cmd || KEEP.test(cmd)) continue;
    if (cmd.includes(root) || REDIS_SIGNATURE.test(cmd) || CHROMIUM_SIGNATURE.test(cmd)) {
      found.set(pid, cmd);
    }
  }
  return found;
}

/**
 * The suite's processes still alive after it ended that were not there before it began. Waits
 * up to `graceMs` for processes that are on their way out.
 */
export async function leftBehind(root, before, graceMs = 5_000) {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const now = [...suiteProcesses(root)].filter(([pid]) => !before.has(pid));
    if (now.length === 0 || Date.now() >= deadline) return now;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
