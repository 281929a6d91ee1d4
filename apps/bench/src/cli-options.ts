import { LATENCY_PROFILES, type LatencyProfile } from './latency/latency-backends.js';
import { SCENARIO_IDS, type ScenarioId } from './results.js';
import { SUBJECTS, type SubjectId } from './subjects/catalog.js';

export interface CliOptions {
  quick: boolean;
  scenarios?: ScenarioId[];
  subjects?: SubjectId[];
  /** Delays in front of the S3 and DynamoDB servers (default: raw, none). */
  latency?: LatencyProfile;
  /** Seed of the latency profile's random delays. */
  latencySeed?: number;
  /** Directory for latest.json and chart.svg. */
  out?: string;
  help: boolean;
}

export const USAGE = `Usage: pnpm bench [options]

  --quick                 short windows and few cycles: a smoke run, not a measurement
  --scenarios <a,b,...>   ${SCENARIO_IDS.join(', ')} (default: all; cost is computed from what ran)
  --subjects <a,b,...>    ${SUBJECTS.map((s) => s.id).join(', ')} (default: all)
  --latency <raw|aws>     aws: every S3 and DynamoDB request goes through a proxy that delays it
                          as in one AWS region (src/latency/aws-profile.ts); raw (default): none
  --latency-seed <n>      seed of the aws profile's random delays (default: 1)
  --out <dir>             where to write latest.json and chart.svg (default: the package's results/)
  --help                  this text`;

/** Parses the command line; throws an Error that says what was wrong and what is accepted. */
export function parseCliOptions(argv: readonly string[]): CliOptions {
  const options: CliOptions = { quick: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const next = argv[++i];
      if (next === undefined || next.startsWith('--')) throw new Error(`${arg} needs a value.`);
      return next;
    };
    switch (arg) {
      case '--quick':
        options.quick = true;
        break;
      case '--help':
      case '-h':
        options.help = true;
        break;
      case '--scenarios':
        options.scenarios = listOf(arg, value(), SCENARIO_IDS);
        break;
      case '--subjects':
        options.subjects = listOf(
          arg,
          value(),
          SUBJECTS.map((s) => s.id),
        );
        break;
      case '--latency':
        options.latency = oneOf(arg, value(), LATENCY_PROFILES);
        break;
      case '--latency-seed': {
        const seed = Number(value());
        if (!Number.isSafeInteger(seed)) throw new Error(`${arg} needs an integer, got "${argv[i]}".`);
        options.latencySeed = seed;
        break;
      }
      case '--out':
        options.out = value();
        break;
      default:
        throw new Error(`Unknown option "${arg}".`);
    }
  }
  return options;
}

function listOf<T extends string>(option: string, text: string, known: readonly T[]): T[] {
  const items = text.split(',').map((item) => item.trim());
  for (const item of items) {
    if (!known.includes(item as T)) {
      throw new Error(`${option}: unknown "${item}"; choose from ${known.join(', ')}.`);
    }
  }
  return items as T[];
}

function oneOf<T extends string>(option: string, text: string, known: readonly T[]): T {
  if (!known.includes(text as T))
    throw new Error(`${option}: unknown "${text}"; choose one of ${known.join(', ')}.`);
  return text as T;
}
