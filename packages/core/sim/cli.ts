import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addBuild, type CoreBuild } from './core-build.js';
import { loadReleasedBuild } from './released-build.js';
import { reportUnhandled, runSeed, type SeedResult } from './run-seed.js';
import { addStats, emptyStats, type SimStats, totalOps } from './stats.js';

/**
 * `pnpm sim [--seeds N] [--from F] [--explore N] [--explore-from F] [--seed S] [--minutes M]
 *   [--workers W] [--ci] [--trace] [--json] [--keep-going] [--skip FILE] [--ignore REGEX]
 *   [--released DIR]`
 * (see sim/README.md)
 *
 * Runs seeds until one fails (then prints the violation, a one-line replay command and the
 * trace that led there, and exits 1) or all pass (then prints what was covered).
 * `--ci` is the budget `pnpm test` runs: the fixed seeds 1..CI_SEEDS and CI_EXPLORE exploring
 * seeds new with every commit, CI_MINUTES simulated minutes each, over two worker processes;
 * it fails unless that covered a million lock operations.
 */
const CI_SEEDS = 500;
const CI_EXPLORE = 200;
const CI_MINUTES = 2;
const CI_MIN_OPS = 1_000_000;
const TRACE_TAIL = 200;
/**
 * Exploring seeds start somewhere in [EXPLORE_BASE, EXPLORE_BASE + EXPLORE_SPAN): far above
 * any fixed range, and below 2^32, where the seed's bits stop mattering (rng.ts).
 */
const EXPLORE_BASE = 1_000_000;
const EXPLORE_SPAN = 2_000_000_000;
/** Overrides where the exploring seeds start (a number), e.g. to rerun another commit's. */
const EXPLORE_ENV = 'LATCH_SIM_EXPLORE_FROM';

interface Args {
  seeds: number;
  from: number;
  /** Exploring seeds run after the fixed ones: how many, and the first (undefined: derived). */
  explore: number;
  exploreFrom: number | undefined;
  /** These seeds, in this order, instead of the ranges (the mutant script's subset). */
  list: number[] | undefined;
  seed: number | undefined;
  minutes: number;
  workers: number;
  ci: boolean;
  trace: boolean;
  json: boolean;
  /** Run every seed even after a violation, printing one line per failing seed. */
  keepGoing: boolean;
  /** File with a JSON array of seeds not to run (the mutant script skips seeds the unmutated code fails). */
  skip: string | undefined;
  /** Regular expression: violations it matches ("check: message") are counted and passed over. */
  ignore: string | undefined;
  /** A released core's compiled `src` (sim/build-released.mjs) to run beside this checkout's. */
  released: string | undefined;
  worker: boolean;
  stride: number;
  offset: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    seeds: 20,
    from: 1,
    explore: 0,
    exploreFrom: undefined,
    list: undefined,
    seed: undefined,
    minutes: CI_MINUTES,
    workers: 0,
    ci: false,
    trace: false,
    json: false,
    keepGoing: false,
    skip: undefined,
    ignore: undefined,
    released: undefined,
    worker: false,
    stride: 1,
    offset: 0,
  };
  const number = (name: string, value: string | undefined): number => {
    const n = Number(value);
    if (value === undefined || !Number.isFinite(n) || n < 0) {
      console.error(`sim: ${name} needs a non-negative number, got ${value}`);
      process.exit(2);
    }
    return n;
  };
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.includes('=') ? arg.split('=', 2) : [arg, undefined];
    given.add(flag!);
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case '--seeds':
        args.seeds = Math.floor(number(flag, value()));
        break;
      case '--from':
        args.from = Math.floor(number(flag, value()));
        break;
      case '--explore':
        args.explore = Math.floor(number(flag, value()));
        break;
      case '--explore-from':
        args.exploreFrom = Math.floor(number(flag, value()));
        break;
      case '--list':
        args.list = (value() ?? '').split(',').map((seed) => Math.floor(number(flag, seed)));
        break;
      case '--seed':
        args.seed = Math.floor(number(flag, value()));
        break;
      case '--minutes':
        args.minutes = number(flag, value());
        break;
      case '--workers':
        args.workers = Math.floor(number(flag, value()));
        break;
      case '--ci':
        args.ci = true;
        break;
      case '--trace':
        args.trace = true;
        break;
      case '--json':
        args.json = true;
        break;
      case '--ignore':
        args.ignore = value();
        break;
      case '--skip':
        args.skip = value();
        break;
      case '--keep-going':
        args.keepGoing = true;
        break;
      case '--worker':
        args.worker = true;
        break;
      case '--stride':
        args.stride = Math.floor(number(flag, value()));
        break;
      case '--offset':
        args.offset = Math.floor(number(flag, value()));
        break;
      case '--released':
        args.released = value();
        break;
      case '--':
        break;
      default:
        console.error(`sim: unknown argument ${arg}`);
        console.error(
          'usage: pnpm sim [--seeds N] [--from F] [--explore N] [--explore-from F] [--list S,S] [--seed S] [--minutes M] [--workers W] [--ci] [--trace] [--json] [--keep-going] [--skip FILE] [--ignore REGEX] [--released DIR]',
        );
        process.exit(2);
    }
  }
  if (args.ci) {
    // The budget, unless the command line overrides a part of it (the mutant script may).
    if (!given.has('--seeds')) args.seeds = CI_SEEDS;
    if (!given.has('--minutes')) args.minutes = CI_MINUTES;
    if (!given.has('--explore')) args.explore = CI_EXPLORE;
    if (args.workers === 0) args.workers = 2;
  }
  return args;
}

/**
 * Where this run's exploring seeds start, and why there: --explore-from, else $LATCH_SIM_EXPLORE_FROM,
 * else a hash of the commit checked out (every push explores new ground, and a rerun of one
 * commit runs the same seeds), else of today's UTC date when git is not there.
 */
function exploreStart(args: Args): { from: number; source: string } {
  if (args.exploreFrom !== undefined) return { from: args.exploreFrom, source: '--explore-from' };
  const env = process.env[EXPLORE_ENV];
  if (env !== undefined && env !== '') {
    const n = Number(env);
    if (!Number.isSafeInteger(n) || n < 0) {
      console.error(`sim: ${EXPLORE_ENV} needs a non-negative integer, got ${env}`);
      process.exit(2);
    }
    return { from: n, source: `$${EXPLORE_ENV}` };
  }
  let basis: string;
  let source: string;
  try {
    basis = execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: fileURLToPath(new URL('.', import.meta.url)),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    source = `commit ${basis.slice(0, 12)}`;
  } catch {
    basis = new Date().toISOString().slice(0, 10);
    source = `date ${basis} (no git commit found)`;
  }
  const hash = createHash('sha256').update(basis).digest().readUInt32BE(0);
  return { from: EXPLORE_BASE + (hash % EXPLORE_SPAN), source };
}

/** Every seed of the run in order: the fixed range, then the exploring one. */
function seedList(args: Args): number[] {
  if (args.list) return args.list;
  const seeds: number[] = [];
  for (let i = 0; i < args.seeds; i++) seeds.push(args.from + i);
  for (let i = 0; i < args.explore; i++) seeds.push(args.exploreFrom! + i);
  return seeds;
}

/** A failing seed as the parent learns it. */
interface Failure {
  seed: number;
  check: string;
  message?: string;
  report: string;
}

/** The violation report: what failed, how to replay it, and the trace that led there. */
function report(result: SeedResult, minutes: number, released?: string): string {
  const v = result.violation!;
  const c = result.config;
  const replay = `pnpm sim --seed ${result.seed}${minutes === CI_MINUTES ? '' : ` --minutes ${minutes}`}${released ? ` --released ${released}` : ''}`;
  const lines = [
    '',
    `VIOLATION in seed ${result.seed}: ${v.check}`,
    `  ${v.message}`,
    `  at virtual time ${v.at.toFixed(3)} ms`,
    `Replay: ${replay}`,
    `Run: ${c.clients.length} clients, keys ${c.keys.map((key) => (c.limits[key] === 1 ? key : `${key} (limit ${c.limits[key]})`)).join(', ')}, ${c.flavor} store, clocks ${c.regime}, faults ${c.intensity}, request timeout ${c.requestTimeoutMs} ms${c.failClosed ? ', fail-closed locks' : ''}`,
    ...c.clients.map(
      (k, i) =>
        `  c${i}: ${k.clockMode} tol ${k.toleranceMs}, lease ${k.leaseMs}, heartbeat ${k.heartbeatMs ?? 'default'}, poll ${k.pollMs}, turn ${k.localTurnMs ?? 'default'}, retry ${k.retry.attempts}x${k.retry.baseMs}..${k.retry.maxMs}, clock offset ${k.clock.offsetMs.toFixed(1)} ms drift ${k.clock.driftPpm.toFixed(1)} ppm rate ${k.clock.rate.toFixed(5)}`,
    ),
    `Trace (last ${TRACE_TAIL} entries: virtual ms, process, key, what):`,
    ...result.trace.tail(TRACE_TAIL).map((line) => `  ${line}`),
    '',
  ];
  return lines.join('\n');
}

function ignoreOf(args: Args): RegExp | undefined {
  return args.ignore ? new RegExp(args.ignore) : undefined;
}

function summary(stats: SimStats, wallMs: number, workers: number): string {
  const ops = totalOps(stats);
  const byKind = (counts: Record<string, number>) =>
    Object.entries(counts)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  const faults = Object.values(stats.faults).reduce((a, b) => a + b, 0);
  return [
    `seeds run:              ${stats.seeds}${stats.exclusionSkipped ? ` (${stats.exclusionSkipped} with clocks beyond the trusted bound: exclusion and fencing-order checks skipped there)` : ''}`,
    `simulated lock ops:     ${ops} (${byKind(stats.ops)})`,
    `store requests:         ${stats.storeRequests}`,
    `fault events:           ${faults} (${byKind(stats.faults)})`,
    `local passes:           ${byKind(stats.coverage)}`,
    `exclusion looked at:    ${Object.entries(stats.seen)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    ...(Object.keys(stats.handedByBuild).length > 1
      ? [`locks handed, by core:  ${byKind(stats.handedByBuild)}`]
      : []),
    `checks made:            ${stats.checks}${stats.ignored ? ` (${stats.ignored} violations passed over by --ignore)` : ''}`,
    `events run:             ${stats.steps}`,
    `simulated time:         ${(stats.simulatedMs / 60_000).toFixed(1)} min`,
    `wall time:              ${(wallMs / 1000).toFixed(1)} s on ${workers} process${workers === 1 ? '' : 'es'} (${Math.round(ops / (wallMs / 1000))} simulated ops/s)`,
  ].join('\n');
}

/** The name of a released build: its commit, the directory above its `dist`. */
function releasedName(dir: string): string {
  return basename(dirname(resolve(dir)));
}

let loaded: CoreBuild | undefined;

/** The released build of `--released`, loaded once and known to the checks from then on. */
async function releasedBuild(args: Args): Promise<CoreBuild | undefined> {
  if (args.released === undefined) return undefined;
  if (!loaded) {
    loaded = await loadReleasedBuild(args.released, releasedName(args.released));
    addBuild(loaded);
  }
  return loaded;
}

/** Runs this process's share of seeds; `onSeed` gets each result; stops at the first violation. */
async function runSeeds(args: Args, onSeed: (result: SeedResult) => void): Promise<SeedResult | undefined> {
  const released = await releasedBuild(args);
  const skip = new Set<number>(args.skip ? JSON.parse(readFileSync(args.skip, 'utf8')) : []);
  const seeds = seedList(args);
  for (let i = args.offset; i < seeds.length; i += args.stride) {
    const seed = seeds[i]!;
    if (skip.has(seed)) continue;
    const result = await runSeed(seed, { minutes: args.minutes, ignore: ignoreOf(args), released });
    onSeed(result);
    if (result.violation && args.keepGoing) {
      console.log(`seed ${result.seed}: ${result.violation.check}: ${result.violation.message}`);
      continue;
    }
    if (result.violation) return result;
  }
  return undefined;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  process.on('unhandledRejection', (error) => reportUnhandled('unhandled-rejection', error));
  // Capturing a stack for each of the hundreds of thousands of errors core throws (timeouts,
  // store faults) takes a tenth of a run, and nothing reads them: runs of many seeds skip it.
  // A replay (--seed) keeps them for the report; the run is the same either way (same hash).
  if (args.seed === undefined) Error.stackTraceLimit = 0;
  const started = performance.now();

  if (args.worker) {
    const failed = await runSeeds(args, (result) => {
      process.send!({ type: 'seed', seed: result.seed, stats: result.stats });
      if (result.violation && !args.keepGoing) {
        process.send!({
          type: 'violation',
          seed: result.seed,
          check: result.violation.check,
          message: result.violation.message,
          report: report(result, args.minutes, args.released),
        });
      }
    });
    process.exitCode = failed ? 1 : 0;
    process.disconnect?.();
    return;
  }

  if (args.seed !== undefined) {
    const result = await runSeed(args.seed, {
      minutes: args.minutes,
      released: await releasedBuild(args),
      ignore: ignoreOf(args),
      hashTrace: true,
      ...(args.trace ? { echo: (line: string) => console.log(line) } : {}),
    });
    const wallMs = performance.now() - started;
    if (result.violation) console.log(report(result, args.minutes, args.released));
    console.log(summary(result.stats, wallMs, 1));
    console.log(`trace:                  ${result.trace.size} entries, hash ${result.trace.hash}`);
    if (args.json) console.log(JSON.stringify(jsonSummary(result.stats, wallMs, result)));
    process.exitCode = result.violation ? 1 : 0;
    return;
  }

  if (args.explore > 0 && !args.list) {
    const { from, source } = exploreStart(args);
    args.exploreFrom = from;
    console.log(
      `sim: ${args.seeds > 0 ? `fixed seeds ${args.from}..${args.from + args.seeds - 1}` : 'no fixed seeds'}; exploring seeds ${from}..${from + args.explore - 1} from ${source} (replay one with pnpm sim --seed S)`,
    );
  }
  const workers = Math.max(1, Math.min(args.workers || 1, seedList(args).length));
  const total = emptyStats();
  let failure: Failure | undefined;
  if (workers === 1) {
    const failed = await runSeeds(args, (result) => addStats(total, result.stats));
    if (failed)
      failure = {
        seed: failed.seed,
        check: failed.violation!.check,
        report: report(failed, args.minutes, args.released),
      };
  } else {
    failure = await runWorkers(args, workers, total);
  }
  const wallMs = performance.now() - started;
  if (failure) console.log(failure.report);
  console.log(summary(total, wallMs, workers));
  const ops = totalOps(total);
  let code = failure ? 1 : 0;
  if (args.released && !failure) {
    const missing = ['current', releasedName(args.released)].filter((name) => !total.handedByBuild[name]);
    if (missing.length > 0) {
      console.log(
        `sim: a mixed-version run in which no lock of ${missing.join(' or ')} core reached user code`,
      );
      code = 1;
    }
  }
  if (args.ci && !failure && ops < CI_MIN_OPS) {
    console.log(
      `sim: the CI budget covered ${ops} lock operations, fewer than ${CI_MIN_OPS}: raise CI_SEEDS in sim/cli.ts`,
    );
    code = 1;
  }
  if (args.json) console.log(JSON.stringify(jsonSummary(total, wallMs, undefined, failure)));
  process.exitCode = code;
}

function jsonSummary(
  stats: SimStats,
  wallMs: number,
  single?: SeedResult,
  failure?: { seed: number; check: string; message?: string },
): unknown {
  const violation = single?.violation
    ? { seed: single.seed, check: single.violation.check, message: single.violation.message }
    : failure
      ? { seed: failure.seed, check: failure.check, message: failure.message }
      : null;
  return { summary: true, seeds: stats.seeds, ops: totalOps(stats), wallMs: Math.round(wallMs), violation };
}

/** Splits the seeds over `workers` child processes (interleaved, so each gets a fair share). */
function runWorkers(args: Args, workers: number, total: SimStats): Promise<Failure | undefined> {
  const script = fileURLToPath(import.meta.url);
  const children: ChildProcess[] = [];
  return new Promise((resolve) => {
    let running = workers;
    let failure: Failure | undefined;
    for (let k = 0; k < workers; k++) {
      const child = fork(
        script,
        [
          '--worker',
          `--seeds=${args.seeds}`,
          `--from=${args.from}`,
          `--explore=${args.explore}`,
          ...(args.list ? [`--list=${args.list.join(',')}`] : []),
          ...(args.explore > 0 ? [`--explore-from=${args.exploreFrom}`] : []),
          `--minutes=${args.minutes}`,
          `--stride=${workers}`,
          `--offset=${k}`,
          ...(args.keepGoing ? ['--keep-going'] : []),
          ...(args.skip ? [`--skip=${args.skip}`] : []),
          ...(args.ignore ? [`--ignore=${args.ignore}`] : []),
          ...(args.released ? [`--released=${args.released}`] : []),
        ],
        { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
      );
      children.push(child);
      child.on(
        'message',
        (message: {
          type: string;
          seed: number;
          stats?: SimStats;
          check?: string;
          message?: string;
          report?: string;
        }) => {
          if (message.type === 'seed' && message.stats) addStats(total, message.stats);
          if (message.type === 'violation' && !failure) {
            failure = {
              seed: message.seed,
              check: message.check!,
              message: message.message!,
              report: message.report!,
            };
            // One failing seed is enough: stop the other workers (ours, by handle).
            for (const other of children) if (other !== child && other.exitCode === null) other.kill();
          }
        },
      );
      child.on('exit', (code, signal) => {
        if (code !== 0 && code !== 1 && !signal && !failure) {
          failure = {
            seed: -1,
            check: 'worker-crashed',
            report: `sim: worker ${k} exited with code ${code}`,
          };
        }
        if (--running === 0) resolve(failure);
      });
    }
  });
}

void main();
