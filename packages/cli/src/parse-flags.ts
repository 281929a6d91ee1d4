import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from './usage-error.js';

type FlagOptions = Record<string, { type: 'string' | 'boolean'; short?: string }>;

/** The parsed values: a string or boolean per flag, absent when not given. */
export type FlagValues<O extends FlagOptions> = {
  [K in keyof O]?: O[K]['type'] extends 'boolean' ? boolean : string;
};

/**
 * node:util parseArgs in strict mode, with its errors turned into short usage messages that
 * name the command ("unknown option --foo. See 'latch run --help'.").
 */
export function parseFlags<const O extends FlagOptions>(
  command: string,
  args: string[],
  options: O,
): FlagValues<O> {
  return parseFlagsAndArguments(command, args, options, 0).values;
}

/**
 * parseFlags for a command that also takes up to `most` arguments besides its flags
 * (`latch ls [prefix]`): one more is refused as an unexpected argument.
 */
export function parseFlagsAndArguments<const O extends FlagOptions>(
  command: string,
  args: string[],
  options: O,
  most: number,
): { values: FlagValues<O>; positionals: string[] } {
  let parsed: { values: unknown; positionals: string[] };
  try {
    const config: ParseArgsConfig = { args, options, strict: true, allowPositionals: most > 0 };
    parsed = parseArgs(config);
  } catch (error) {
    throw new UsageError(`${explainParseError(error)} See '${command} --help'.`);
  }
  const extra = parsed.positionals[most];
  if (extra !== undefined) {
    throw new UsageError(`unexpected argument ${JSON.stringify(extra)}. See '${command} --help'.`);
  }
  return { values: parsed.values as FlagValues<O>, positionals: parsed.positionals };
}

function explainParseError(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  const text = message ?? String(error);
  const quoted = /'([^']+)'/.exec(text)?.[1];
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${quoted ?? text}.`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${JSON.stringify(quoted ?? text)}.`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const flag = (quoted ?? '').replace(/ <value>$/, '');
      if (/does not take an argument/.test(text)) return `${flag} takes no value.`;
      if (/ambiguous/.test(text))
        return `${flag} needs a value (write ${flag}=-value for one starting with "-").`;
      return `${flag} needs a value.`;
    }
    default:
      return text.split('\n')[0]!;
  }
}
