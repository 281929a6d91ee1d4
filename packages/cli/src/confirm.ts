import { createInterface } from 'node:readline';
import type { CliContext } from './cli-context.js';

/**
 * Asks a yes/no question and reads one line of answer: true only for "y" or "yes" (any case).
 * An empty line, anything else, or the end of the input is a no: an operator's tool frees
 * nothing by default.
 */
export async function confirm(question: string, input: CliContext['input']): Promise<boolean> {
  input.ask(`${question} [y/N] `);
  const lines = createInterface({ input: input.stream, terminal: false });
  try {
    const answer = await new Promise<string | undefined>((resolve) => {
      lines.once('line', resolve);
      lines.once('close', () => resolve(undefined));
    });
    return answer !== undefined && /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    lines.close();
  }
}
