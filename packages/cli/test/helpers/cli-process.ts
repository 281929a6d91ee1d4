import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));
export const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  child: ChildProcess;
  /** Output so far. */
  stdout(): string;
  stderr(): string;
  result: Promise<CliResult>;
}

/**
 * A clean environment for the CLI: nothing inherited from the machine running the tests
 * (no GITHUB_* of a CI runner, no real AWS profile), only what each test passes.
 */
export function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  const nowhere = join(tmpdir(), 'latch-cli-tests-no-such-file');
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    AWS_CONFIG_FILE: nowhere,
    AWS_SHARED_CREDENTIALS_FILE: nowhere,
    AWS_EC2_METADATA_DISABLED: 'true',
    ...extra,
  };
}

/** Starts `node dist/bin.js ...args` as its own process. */
export function startCli(args: string[], env: Record<string, string>): CliProcess {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const result = new Promise<CliResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, result };
}

export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return startCli(args, env).result;
}

/** `latch run --store <store> --name <name> [...flags] -- <command...>` */
export function runArgs(store: string, name: string, flags: string[], command: string[]): string[] {
  return ['run', '--store', store, '--name', name, ...flags, '--', ...command];
}

/** `node <fixture> ...args`, the argv to put after `--`. */
export function fixture(name: string, ...args: string[]): string[] {
  return [process.execPath, join(FIXTURES, name), ...args];
}

/** The non-empty lines a fixture has written to `file` so far (none while it does not exist). */
export function readLines(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** Polls until `condition` holds; generous, because the machine may be loaded. */
export async function until(condition: () => boolean, what: string, timeoutMs = 45_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
