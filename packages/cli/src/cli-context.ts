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
  /**
   * Where a confirmation is read from, whether someone can type it there (a terminal), and how
   * a question is shown (on stderr, leaving the cursor after it).
   */
  input: { stream: NodeJS.ReadableStream; isTerminal: boolean; ask(question: string): void };
  /** True when `out` writes to a terminal: `watch` redraws in place then, else it prints lines. */
  outputIsTerminal: boolean;
}

/** One `latch <name>` command. */
export interface Command {
  name: string;
  summary: string;
  help: string;
  execute(args: string[], ctx: CliContext): Promise<number>;
}
