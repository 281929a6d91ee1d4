import { spawn } from 'node:child_process';
import type { Env } from './aws-settings.js';
import { exitCodeForSignal } from './signal-trap.js';

export interface RunningCommand {
  /** Resolves with the exit code latch should pass on (128 + signo when killed by a signal). */
  exited: Promise<number>;
  kill(signal: NodeJS.Signals): void;
}

/** Thrown when the command could not be started at all; `exitCode` follows the shell (127 / 126). */
export class CommandStartError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'CommandStartError';
  }
}

/**
 * Starts argv[0] with the given arguments directly (no shell, so nothing is re-parsed or
 * expanded), sharing latch's stdin, stdout and stderr.
 */
export function spawnCommand(argv: string[], env: Env): RunningCommand {
  const [file, ...args] = argv as [string, ...string[]];
  const child = spawn(file, args, { stdio: 'inherit', env: env as NodeJS.ProcessEnv });
  const exited = new Promise<number>((resolve, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      // 'error' without 'exit' means the process never started.
      if (child.pid !== undefined) return;
      if (error.code === 'ENOENT')
        reject(new CommandStartError(`cannot run "${file}": command not found`, 127));
      else reject(new CommandStartError(`cannot run "${file}": ${error.message}`, 126));
    });
    child.once('exit', (code, signal) => {
      resolve(code ?? (signal ? exitCodeForSignal(signal) : 1));
    });
  });
  return {
    exited,
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}
