import { appendFileSync } from 'node:fs';
import type { Env } from './aws-settings.js';
import { UsageError } from './usage-error.js';

/** The file GitHub Actions reads step outputs from, or a usage error when not in GitHub Actions. */
export function githubOutputFile(env: Env): string {
  const file = env.GITHUB_OUTPUT;
  if (!file) {
    throw new UsageError(
      `--github-output needs $GITHUB_OUTPUT, the step output file GitHub Actions sets; it is not set here.`,
    );
  }
  return file;
}

/** Appends `name=value` lines to the step output file. */
export function writeGithubOutputs(file: string, outputs: Record<string, string>): void {
  let text = '';
  for (const [name, value] of Object.entries(outputs)) {
    // One line per output: a newline in a value would start a new (forged) output.
    if (/[\r\n]/.test(value))
      throw new UsageError(`The ${name} output contains a line break and cannot be written.`);
    text += `${name}=${value}\n`;
  }
  try {
    appendFileSync(file, text, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot write the step outputs to $GITHUB_OUTPUT (${file}): ${(error as Error).message}`,
    );
  }
}
