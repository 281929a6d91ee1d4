import { isatty } from 'node:tty';
import type { Env } from './aws-settings.js';
import type { CliContext, Command } from './cli-context.js';
import { acquireCommand } from './commands/acquire.js';
import { doctorCommand } from './commands/doctor.js';
import { forceReleaseCommand } from './commands/force-release.js';
import { lsCommand } from './commands/ls.js';
import { releaseCommand } from './commands/release.js';
import { runCommand } from './commands/run.js';
import { statusCommand } from './commands/status.js';
import { watchCommand } from './commands/watch.js';
import { describeFailure } from './describe-failure.js';
import { ExitCode } from './exit-codes.js';
import { VERSION } from './version.js';

const COMMANDS: readonly Command[] = [
  runCommand,
  acquireCommand,
  releaseCommand,
  statusCommand,
  lsCommand,
  watchCommand,
  forceReleaseCommand,
  doctorCommand,
];

const HELP = `Usage: latch <command> [options]

Distributed locks for CI pipelines and scripts, on Amazon S3 or DynamoDB: "only one deploy at
a time", without writing code.

Commands:
${COMMANDS.map((command) => `  ${command.name.padEnd(15)}${command.summary}`).join('\n')}

Stores (--store, or $LATCH_STORE):
  s3://bucket/prefix        S3 conditional writes (recommended on Amazon S3)
  s3+list://bucket/prefix   S3-compatible stores without conditional writes (weaker)
  dynamodb://table          DynamoDB conditional writes (table with a string key "pk")
  memory:                   in this process only, for tests

AWS region, credentials and endpoint come from the standard AWS environment (AWS_REGION,
AWS_PROFILE, AWS_ENDPOINT_URL, ...).

Run 'latch <command> --help' for a command's options; 'latch --version' for the version.`;

export interface MainOptions {
  /** Receives stdout lines (default: process.stdout). */
  out?: (line: string) => void;
  /** Receives stderr lines (default: process.stderr). */
  err?: (line: string) => void;
}

/**
 * Runs the latch command line and resolves with the exit code; it never throws and never
 * calls process.exit. `env` supplies latch's own settings (LATCH_STORE, GITHUB_*) and the
 * environment of the command `latch run` starts; the AWS SDK reads its settings from
 * process.env itself.
 */
export async function main(
  argv: readonly string[],
  env: Env = process.env,
  options: MainOptions = {},
): Promise<number> {
  const ctx: CliContext = {
    env,
    out: options.out ?? ((line) => process.stdout.write(`${line}\n`)),
    err: options.err ?? ((line) => process.stderr.write(`${line}\n`)),
    // process.stdin is only touched by a command that reads it: opening it may hold the process open.
    input: {
      get stream() {
        return process.stdin;
      },
      isTerminal: isatty(0),
      ask: options.err ?? ((question) => process.stderr.write(question)),
    },
    // Lines handed to options.out go wherever the caller puts them: never a terminal to redraw.
    outputIsTerminal: options.out === undefined && isatty(1),
  };
  const [first, ...rest] = argv;
  let prefix = 'latch';
  try {
    if (first === undefined) {
      ctx.err(HELP);
      return ExitCode.usage;
    }
    if (first === '--help' || first === '-h') {
      ctx.out(HELP);
      return ExitCode.ok;
    }
    if (first === '--version' || first === '-v') {
      ctx.out(VERSION);
      return ExitCode.ok;
    }
    if (first === 'help') {
      const topic = rest[0] === undefined ? undefined : findCommand(rest[0]);
      ctx.out(topic ? topic.help : HELP);
      return ExitCode.ok;
    }
    const command = findCommand(first);
    if (!command) {
      ctx.err(
        `latch: unknown command ${JSON.stringify(first)}; commands are ${COMMANDS.map((c) => c.name).join(', ')}. See 'latch --help'.`,
      );
      return ExitCode.usage;
    }
    prefix = `latch ${command.name}`;
    return await command.execute([...rest], ctx);
  } catch (error) {
    const failure = describeFailure(error, ctx);
    ctx.err(`${prefix}: ${failure.message}`);
    return failure.code;
  }
}

function findCommand(name: string): Command | undefined {
  return COMMANDS.find((command) => command.name === name);
}
