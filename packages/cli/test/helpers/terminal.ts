import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));

/** The CLI in a pseudo-terminal: what it writes (stdout and stderr mixed, as a terminal shows them), and a keyboard. */
export interface TerminalCli {
  /** Everything the terminal showed so far, typed input echoed. */
  screen(): string;
  /** Types text, as someone at the keyboard would. */
  type(text: string): void;
  /** True once the CLI (and the terminal around it) has exited. */
  exited(): boolean;
  result: Promise<{ code: number | null; screen: string }>;
}

/**
 * Starts `node dist/bin.js ...args` with a pseudo-terminal for its stdin, stdout and stderr,
 * through util-linux `script` (-e passes the exit code on, -q drops its own messages).
 */
export function startCliInTerminal(args: string[], env: Record<string, string>): TerminalCli {
  const command = [process.execPath, BIN, ...args].map(shellQuote).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let screen = '';
  const collect = (chunk: string) => {
    screen += chunk;
  };
  child.stdout.setEncoding('utf8').on('data', collect);
  child.stderr.setEncoding('utf8').on('data', collect);
  const result = new Promise<{ code: number | null; screen: string }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, screen }));
  });
  return {
    screen: () => screen,
    type: (text) => child.stdin.write(text),
    exited: () => child.exitCode !== null || child.signalCode !== null,
    result,
  };
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}
