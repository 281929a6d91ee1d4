import type { Env } from './aws-settings.js';
import type { StoreUrl } from './store-url.js';

/** What a command may touch besides the store: its environment and two line-oriented outputs. */
export interface CliContext {
  env: Env;
  /** Writes one line (a newline is added) to stdout: results, JSON, help. */
  out(line: string): void;
  /** Writes one line (a newline is added) to stderr: progress, warnings, errors. */
  err(line: string): void;
  /** The store the command opened (set by openStore): its failures are told in terms of this --store URL. */
  store?: StoreUrl;
}

/** One `latch <name>` command. */
export interface Command {
  name: string;
  summary: string;
  help: string;
  execute(args: string[], ctx: CliContext): Promise<number>;
}
