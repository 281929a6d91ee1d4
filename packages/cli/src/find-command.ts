import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { Env } from './aws-settings.js';
import { CommandStartError } from './spawn-command.js';

/**
 * Checks that `file` names a program that can be started, the way the system will look for it
 * (a name with a slash as a path, any other name on $PATH), so that `latch run -- typo` says
 * "command not found" before it takes, or waits for, the lock. Throws the CommandStartError the
 * start itself would give (127 not found, 126 not executable); spawning still reports the rare
 * program that disappears in between. Windows resolves names its own way (PATHEXT): not checked.
 */
export function checkCommandExists(file: string, env: Env, cwd = process.cwd()): void {
  if (process.platform === 'win32') return;
  if (file.includes('/')) {
    const path = isAbsolute(file) ? file : join(cwd, file);
    if (!isFile(path)) throw new CommandStartError(`cannot run "${file}": command not found`, 127);
    if (!isExecutable(path)) throw new CommandStartError(`cannot run "${file}": permission denied`, 126);
    return;
  }
  // Without $PATH the system falls back to a default search path: leave that case to the start.
  if (env.PATH === undefined) return;
  // An empty $PATH entry means the current directory, as for the shell.
  const dirs = env.PATH.split(delimiter).map((dir) => (dir === '' ? cwd : dir));
  const found = dirs.map((dir) => join(dir, file)).filter(isFile);
  if (found.length === 0) throw new CommandStartError(`cannot run "${file}": command not found`, 127);
  if (!found.some(isExecutable)) throw new CommandStartError(`cannot run "${file}": permission denied`, 126);
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
