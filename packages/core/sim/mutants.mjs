#!/usr/bin/env node
// Proof that the simulator has teeth: each mutant is one exact search/replace in one core source
// file, reintroducing a bug the review found or the audit named, or blinding a check's view of
// lock state. The simulator is built once (tsc, in place, as `pnpm sim` does) and snapshotted;
// each mutant is that build with its one file transpiled again from the mutated source (the
// compiler options of tsconfig.sim.json; isolatedModules, so one file transpiles alone, but it
// is not type-checked), then run. Seeds the unmutated build already fails are skipped for every
// mutant, so a mutant only counts as found by a seed that passes without it.
//
//   pnpm sim:mutants [--only name,name] [--seeds N] [--minutes M] [--keep] [--ignore REGEX] [--jobs J]
//       every mutant against the CI budget's fixed seeds (--explore 0), until a seed fails it
//   pnpm sim:mutants --subset [--only name,name] [--seeds N] [--jobs J]
//       the fast subset `pnpm test` runs: the mutants with a `subset` entry, each run only with
//       its own check on (every other violation passed over, as --ignore does), on the seeds
//       recorded as finding it, then on seeds 1..N (default SUBSET_EXTRA_SEEDS), until that
//       check fails; a larger N finds the seeds to record when core has moved them
//
// --ignore passes over violations matching REGEX ("check: message") in every run, baseline
// included: only to see past a known core bug while it is being fixed. --jobs runs that many
// mutants at once (default 2, the CI machine's cores).
//
// A mutant that survives, or whose pattern no longer matches once (core moved on: update it
// here), fails the run. Prints: mutant | check | found by seed | seeds run.
import { execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const core = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = join(core, '..', '..');

/** Seeds 1..this run after a subset mutant's recorded seeds, should core have moved them. */
const SUBSET_EXTRA_SEEDS = 6;

/**
 * Each mutant: where, what to find (exactly once), what to put instead; `subset` puts it in the
 * fast subset: the check that must find it there, and the seeds that did (run first).
 */
const MUTANTS = [
  {
    name: 'hand-over keeps the token',
    file: 'src/engine/cas/lease-protocol.ts',
    search: 'const token = Math.max(base.token, this.known.tokenFloor(lease.key)) + 1;',
    replace: 'const token = base.token;',
    subset: { check: 'fencing-token', seeds: [2] },
  },
  {
    name: 'release without the version check',
    file: 'src/engine/cas/lease-protocol.ts',
    search:
      'async release(lease: LeaseState, data?: { value: unknown }, signal?: AbortSignal): Promise<void> {\n',
    replace:
      'async release(lease: LeaseState, data?: { value: unknown }, signal?: AbortSignal): Promise<void> {\n    const latest = await this.read(lease.key, signal);\n    if (latest) lease.version = latest.version;\n',
  },
  {
    name: 'no renewal deadline (loss timer never fires)',
    file: 'src/client/lease-keeper.ts',
    search: '  checkDeadline(): void {\n',
    replace: '  checkDeadline(): void {\n    if (this.lease.key) return;\n',
    subset: { check: 'taken-away-abort', seeds: [1] },
  },
  {
    name: 'arrivedInTime always true',
    file: 'src/client/lease-deadline.ts',
    search: 'export function arrivedInTime(lease: LeaseState, leaseMs: number, time: Scheduler): boolean {\n',
    replace:
      'export function arrivedInTime(lease: LeaseState, leaseMs: number, time: Scheduler): boolean {\n  if (leaseMs > -1) return true;\n',
    subset: { check: 'liveness', seeds: [10, 13, 5] },
  },
  {
    name: 'renewal timed from when it lands',
    file: 'src/engine/cas/lease-protocol.ts',
    // The lock's renewal (the slot's, below, is indented deeper and followed by `return`).
    search: '      signal,\n    );\n    lease.sentAt = sentAt;\n',
    replace: '      signal,\n    );\n    lease.sentAt = this.clock.time.monotonic() + 0 * sentAt;\n',
  },
  {
    name: 'claim any lease 10 ms after its last write',
    file: 'src/engine/cas/claimable.ts',
    search:
      '  if (!holder) return true;\n  if (holder.leaseMs === null) return false;\n  if (parts.clock.mode',
    replace:
      '  if (!holder || holder.renewedAt < parts.clock.time.now() - 10) return true;\n  if (holder.leaseMs === null) return false;\n  if (parts.clock.mode',
    subset: { check: 'fenced-write', seeds: [1] },
  },
  {
    name: 'review 1: a landed hand-over counted from when it was learned',
    file: 'src/engine/cas/lease-protocol.ts',
    search: '    const leaseStart = earlier ? Math.min(sentAt, next.handOverSentAt) : sentAt;\n',
    replace: '    const leaseStart = sentAt;\n',
  },
  {
    name: "review 2a: the re-read's error rethrown as not applied",
    file: 'src/engine/cas/resolved-write.ts',
    search: '    throw stillUnknown(key, unsure ?? error, error);\n',
    replace: '    throw error;\n',
    subset: { check: 'data', seeds: [1, 13, 8] },
  },
  {
    name: 'review 2b: record unchanged after a timeout taken as not applied',
    file: 'src/engine/cas/resolved-write.ts',
    search: '  if (unchanged) throw stillUnknown(key, unsure);\n',
    replace:
      "    if (unchanged) throw new LockStoreError('not applied', { retryable: true, maybeApplied: false });\n",
  },
  {
    name: 'review 2b: claimInOneRequest busy after a maybe-applied claim',
    file: 'src/engine/cas/claim.ts',
    search:
      '    // Not there now, but a request whose condition is a state may still land later: unknown.\n    throw stillUnknown(key, error);\n',
    replace: '    return { lease: null, current };\n',
  },
  {
    name: 'review 2: abandoned claims never settled',
    file: 'src/client/abandoned-claim.ts',
    search: '  if (!settle || contender.abandoned) return;\n',
    replace: '  if (contender.lockId || !settle || contender.abandoned) return;\n',
  },
  {
    name: 'review 3: a shortening renewal keeps the later deadline',
    file: 'src/client/lease-keeper.ts',
    search: '    this.lowerDeadline(lossDeadline(started, leaseMs, 0));\n',
    replace: '\n',
  },
  {
    name: 'review 4: new tokens ignore the floor this client saw',
    file: 'src/engine/cas/own-lease.ts',
    search: '  return Math.max(current?.record.token ?? 0, parts.known.tokenFloor(key)) + 1;\n',
    replace: '  return (current?.record.token ?? 0) + 1;\n',
  },
  {
    name: 'review 7: a renewal landing after the loss is not settled',
    file: 'src/client/lease-keeper.ts',
    search: '        this.landedAfterLoss = true;\n',
    replace: '\n',
  },
  {
    name: 'review 7: our own landed release is taken as a loss',
    file: 'src/engine/cas/lease-protocol.ts',
    search: '      (found) => found.holder === null && storesData(found, data),\n',
    replace: '      () => false,\n',
  },
  {
    name: 'review 5: late hand-over strands the waiter',
    file: 'src/waiting/key-queue.ts',
    search: '      this.host.requeue(this.key, waiter);\n',
    replace: '      if (!this.waiters.includes(waiter)) this.waiters.unshift(waiter);\n',
  },
  {
    name: 'review 6: fail-closed locks never verify ownership',
    file: 'src/client/lease-keeper.ts',
    search: '      this.verifyTimer = this.time.setTimer(() => void this.verify(), verifyIn);\n',
    replace: '\n',
  },
  {
    name: 'isHeld does not check the deadline',
    file: 'src/client/lock.ts',
    search: '  get isHeld(): boolean {\n    this.keeper.checkDeadline();\n',
    replace: '  get isHeld(): boolean {\n',
    subset: { check: 'exclusion', seeds: [13, 4] },
  },
  // Semaphores and acquireAll (issue 18).
  {
    name: 'semaphore: a full record takes one more holder',
    file: 'src/engine/cas/slot-claim.ts',
    search: '    if (live.length >= limit) {\n',
    replace: '    if (live.length > limit) {\n',
    subset: { check: 'slot-count', seeds: [4] },
  },
  {
    name: 'semaphore: trusted clocks drop a slot without the tolerance',
    file: 'src/engine/cas/slot-claimable.ts',
    search: 'return Math.max(0, holder.expiresAt + clock.toleranceMs + 1 - clock.time.now());',
    replace: 'return Math.max(0, holder.expiresAt + 1 - clock.time.now());',
  },
  {
    name: 'semaphore: untrusted clocks drop a slot without the tolerance',
    file: 'src/engine/cas/slot-claimable.ts',
    search: '  return Math.max(0, firstSeenAt + holder.leaseMs + clock.toleranceMs - now);\n',
    replace: '  return Math.max(0, firstSeenAt + holder.leaseMs - now);\n',
  },
  {
    name: 'semaphore: a renewed slot keeps its first sighting',
    file: 'src/engine/cas/slot-claimable.ts',
    search: '    if (previous?.writeId === holder.writeId) return previous.firstSeenAt;\n',
    replace: '    if (previous) return previous.firstSeenAt;\n',
  },
  {
    name: "semaphore: a holder's write is not rebuilt on the record as it is",
    file: 'src/engine/cas/slot-write.ts',
    search: '    keep(lease, current.version, current.record);\n  }\n',
    replace: '    lease.version = current.version;\n  }\n',
    subset: { check: 'slot-write', seeds: [4] },
  },
  {
    name: "semaphore: a slot's renewal timed from when it lands",
    file: 'src/engine/cas/lease-protocol.ts',
    search: '      lease.sentAt = sentAt;\n',
    replace: '      lease.sentAt = this.clock.time.monotonic() + 0 * sentAt;\n',
  },
  {
    name: "semaphore: a new slot takes the record's token",
    file: 'src/engine/cas/slot-claim.ts',
    search: '    const token = nextToken(parts, key, current);\n',
    replace: '    const token = current?.record.token ?? nextToken(parts, key, current);\n',
  },
  {
    name: 'acquireAll keeps the locks it took when it fails',
    file: 'src/client/lock-set.ts',
    search: '  } catch (error) {\n    await Promise.allSettled(taken.map((lock) => lock.releaseUnused()));\n',
    replace: '  } catch (error) {\n',
    subset: { check: 'lock-set', seeds: [5, 4] },
  },
  {
    name: 'acquireAll returns a set with a lock lost on the way',
    file: 'src/client/lock-set.ts',
    search: '  if (set.signal.aborted) {\n',
    replace: '  if (set.signal.aborted && taken.length === 0) {\n',
  },
  // Passing a lock among one client's callers with no write (reserved fencing tokens).
  {
    name: 'local pass: the next caller keeps the token',
    file: 'src/engine/cas/local-pass.ts',
    search: '    holder: { ...holder, token: holder.token + 1, acquiredAt: now, context: terms.context },\n',
    replace: '    holder: { ...holder, token: holder.token, acquiredAt: now, context: terms.context },\n',
  },
  {
    name: 'local pass: one token past the reserved ones',
    file: 'src/engine/cas/local-pass.ts',
    search: '  if (holder.token === undefined || holder.token >= lease.record.token) return false;\n',
    replace: '  if (holder.token === undefined || holder.token > lease.record.token) return false;\n',
  },
  {
    name: "local pass: the new lock does not inherit the lease's deadline",
    file: 'src/client/lock.ts',
    search:
      '      this.keeper = new LeaseKeeper(this.keptLock(), lease, host.engine, passedFrom.keeper.deadlineAt);\n',
    replace: '      this.keeper = new LeaseKeeper(this.keptLock(), lease, host.engine);\n',
  },
  {
    name: 'local pass: the new lock trusts the lease from the pass on',
    file: 'src/client/lock.ts',
    search:
      '      this.keeper = new LeaseKeeper(this.keptLock(), lease, host.engine, passedFrom.keeper.deadlineAt);\n',
    replace:
      '      this.keeper = new LeaseKeeper(this.keptLock(), lease, host.engine, this.time.monotonic() + 0.9 * settings.leaseMs);\n',
  },
  {
    name: 'local pass: a lock whose handle was read passes on with no write',
    file: 'src/client/lock.ts',
    search: "    if (this.state !== 'releasing' || this.handleShared || this.keeper.unsure) return false;\n",
    replace: "    if (this.state !== 'releasing' || this.keeper.unsure) return false;\n",
    subset: { check: 'handle', seeds: [5] },
  },
  {
    name: 'local pass: a handle read after the pass releases by its token alone',
    file: 'src/client/lock-client.ts',
    search: '    if (fields.passedOn) throw passedOnError(key);\n',
    replace: '\n',
  },
  {
    name: 'local pass: a renewal writes the holder before the last one',
    file: 'src/engine/cas/lease-protocol.ts',
    search: '            ...base.holder!,\n            renewedAt: now,\n',
    replace:
      '            ...base.holder!,\n            ...(base.holder!.token! > 1 ? { token: base.holder!.token! - 1 } : {}),\n            renewedAt: now,\n',
  },
  {
    name: "local pass: a claim starts above the holder's token, not the reserved ones",
    file: 'src/engine/cas/own-lease.ts',
    search: '  return Math.max(current?.record.token ?? 0, parts.known.tokenFloor(key)) + 1;\n',
    replace:
      '  return (current?.record.holder?.token ?? current?.record.token ?? 0) + 1 + 0 * parts.known.tokenFloor(key);\n',
  },
  // One mutant for each check the list above leaves without one.
  {
    name: 'typed errors: a busy acquire with waitMs 0 throws a plain Error',
    file: 'src/client/lock-client.ts',
    search: '        throw new LockTimeoutError(key, 0, attempt.holder, { limit });\n',
    replace: "        throw new Error('lock ' + key + ' is busy, limit ' + limit);\n",
    subset: { check: 'untyped-error', seeds: [1] },
  },
  {
    name: 'limits: a client refuses its own limit while it holds or awaits the key',
    file: 'src/client/lock-client.ts',
    search: '  if (queue.limit === limit || queue.idle) return;\n',
    replace: '  if (queue.idle) return;\n',
    subset: { check: 'limit-mismatch', seeds: [1] },
  },
  {
    // What renaming the field a cast read used to do: every lock looks released, so nothing is
    // ever a live holder and the exclusion check passes without checking anything.
    name: "blinded: the seam never reports a lock as 'held'",
    file: 'src/client/lock.ts',
    search: '      phase: lock.state,\n',
    replace: "      phase: lock.state === 'held' ? 'released' : lock.state,\n",
    subset: { check: 'vacuous', seeds: [1] },
  },
  {
    // A claim answered after a machine suspend: on time by the stopped monotonic clock, while
    // another client took the key over meanwhile (sweep seed 100391).
    name: 'suspend: a lease is handed out without the wall-clock check',
    file: 'src/client/lease-deadline.ts',
    search:
      '  return new SuspendCheck().suspected(lease, leaseMs, time.now(), time.monotonic()) === undefined;\n',
    replace: '  return time.now() > 0 || new SuspendCheck() === undefined;\n',
    subset: { check: 'fencing-token', seeds: [100391, 100735] },
  },
];

function parseArgs(argv) {
  const args = {
    only: undefined,
    seeds: undefined,
    minutes: undefined,
    ignore: undefined,
    keep: false,
    subset: false,
    jobs: 2,
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].includes('=') ? argv[i].split('=', 2) : [argv[i], undefined];
    const value = () => inline ?? argv[++i];
    if (flag === '--only') args.only = value().split(',');
    else if (flag === '--seeds') args.seeds = value();
    else if (flag === '--minutes') args.minutes = value();
    else if (flag === '--keep') args.keep = true;
    else if (flag === '--ignore') args.ignore = value();
    else if (flag === '--subset') args.subset = true;
    else if (flag === '--jobs') args.jobs = Math.max(1, Number(value()) || 1);
    else if (flag !== '--') {
      console.error(`mutants: unknown argument ${argv[i]}`);
      process.exit(2);
    }
  }
  return args;
}

const require = createRequire(join(core, 'package.json'));
const ts = require('typescript');

/** The simulator's compiler options, for transpiling one mutated file like tsc would. */
function transpileOptions() {
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined };
  const { options } = ts.getParsedCommandLineOfConfigFile(join(core, 'tsconfig.sim.json'), {}, host);
  // The package is an ES module: NodeNext emits what ESNext does for it. Options about the
  // project as a whole (where files are, what else to write) do not apply to one file.
  const { rootDir, outDir, tsBuildInfoFile, incremental, declaration, declarationMap, sourceMap, ...own } =
    options;
  return { ...own, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler };
}

/**
 * Builds the simulator in place and snapshots it (the build, and the sources the patterns are
 * matched against): core may be edited while the script runs, and every mutant must be one
 * patch away from the code the baseline ran.
 */
function snapshot() {
  const tsc = join(core, 'node_modules', '.bin', 'tsc');
  try {
    execFileSync(tsc, ['-p', join(core, 'tsconfig.sim.json')], { stdio: 'pipe' });
  } catch (error) {
    console.error(`mutants: core does not compile as it is now:\n${String(error.stdout)}`);
    process.exit(2);
  }
  const dir = mkdtempSync(join(tmpdir(), 'latch-mutants-'));
  for (const entry of ['src', 'sim-dist', 'package.json']) {
    cpSync(join(core, entry), join(dir, entry), { recursive: true });
  }
  return dir;
}

/** A runnable copy of the snapshot's build, with node_modules linked, not copied. */
function scratchCopy(name, base) {
  const dir = mkdtempSync(join(tmpdir(), `latch-mutant-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 30)}-`));
  const pkg = join(dir, 'packages', 'core');
  mkdirSync(pkg, { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  symlinkSync(join(core, 'node_modules'), join(pkg, 'node_modules'), 'dir');
  cpSync(join(base, 'sim-dist'), join(pkg, 'sim-dist'), { recursive: true });
  cpSync(join(base, 'package.json'), join(pkg, 'package.json'));
  return { dir, pkg };
}

/** Applies `mutant` to a copy of the snapshot; a string saying why not, or the copy. */
function mutate(mutant, base, options) {
  const source = readFileSync(join(base, mutant.file), 'utf8');
  const count = source.split(mutant.search).length - 1;
  if (count !== 1)
    return `pattern found ${count} times in ${mutant.file}: core moved on, update it in sim/mutants.mjs`;
  const out = ts.transpileModule(source.replace(mutant.search, mutant.replace), {
    compilerOptions: options,
    fileName: mutant.file,
    reportDiagnostics: true,
  });
  if (out.diagnostics?.length) {
    const text = out.diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('; ');
    return `does not transpile: ${text.slice(0, 200)}`;
  }
  const copy = scratchCopy(mutant.name, base);
  const js = join(copy.pkg, 'sim-dist', mutant.file.replace(/\.ts$/, '.js'));
  writeFileSync(js, out.outputText);
  rmSync(`${js}.map`, { force: true });
  return copy;
}

/** Runs the simulator's CLI; resolves with its output lines once it exits. */
function runSim(pkg, extra) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(pkg, 'sim-dist', 'sim', 'cli.js'), ...extra], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.on('exit', (code) => resolve({ code, lines: out.split('\n') }));
  });
}

function lastJson(lines) {
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i].startsWith('{"summary"')) return JSON.parse(lines[i]);
  }
  return undefined;
}

function failingSeeds(lines) {
  return lines.flatMap((line) => {
    const match = /^seed (\d+): /.exec(line);
    return match ? [Number(match[1])] : [];
  });
}

/** What one mutant runs on: the full budget, or its subset seeds with only its own check on. */
function planOf(mutant, args, skipFile) {
  const common = ['--json', '--explore=0', `--skip=${skipFile}`];
  if (!args.subset) {
    const extra = ['--ci', ...common];
    if (args.seeds) extra.push(`--seeds=${args.seeds}`);
    if (args.minutes) extra.push(`--minutes=${args.minutes}`);
    if (args.ignore) extra.push(`--ignore=${args.ignore}`);
    return extra;
  }
  return [
    `--list=${subsetSeeds(mutant, args).join(',')}`,
    '--workers=1',
    `--ignore=^(?!${mutant.subset.check}: )`,
    ...common,
  ];
}

/** A subset mutant's seeds: those recorded as finding it, then 1..SUBSET_EXTRA_SEEDS. */
function subsetSeeds(mutant, args) {
  const seeds = [...mutant.subset.seeds];
  for (let seed = 1; seed <= (Number(args.seeds) || SUBSET_EXTRA_SEEDS); seed++)
    if (!seeds.includes(seed)) seeds.push(seed);
  return seeds;
}

/** Runs `work` over `items`, `jobs` at a time. */
async function pool(items, jobs, work) {
  let next = 0;
  const lanes = Array.from({ length: Math.min(jobs, items.length) }, async () => {
    while (next < items.length) await work(items[next++]);
  });
  await Promise.all(lanes);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const mutants = MUTANTS.filter(
    (m) => (!args.subset || m.subset) && (!args.only || args.only.some((o) => m.name.includes(o))),
  );
  const base = snapshot();
  const options = transpileOptions();

  // The unmutated build first: seeds it fails say nothing about a mutant.
  const baselineArgs = args.subset
    ? [
        `--list=${[...new Set(mutants.flatMap((m) => subsetSeeds(m, args)))].join(',')}`,
        `--workers=${args.jobs}`,
        '--explore=0',
      ]
    : [
        '--ci',
        '--explore=0',
        ...(args.seeds ? [`--seeds=${args.seeds}`] : []),
        ...(args.minutes ? [`--minutes=${args.minutes}`] : []),
      ];
  if (args.ignore) baselineArgs.push(`--ignore=${args.ignore}`);
  console.log(
    `mutants: the unmutated build first (${args.subset ? "the subset's seeds" : 'the CI budget'})...`,
  );
  const baseCopy = scratchCopy('baseline', base);
  const baseline = await runSim(baseCopy.pkg, [...baselineArgs, '--json', '--keep-going']);
  rmSync(baseCopy.dir, { recursive: true, force: true });
  const failing = failingSeeds(baseline.lines);
  const skipFile = join(base, 'baseline-failing-seeds.json');
  writeFileSync(skipFile, JSON.stringify(failing));
  console.log(
    `mutants: baseline ran ${lastJson(baseline.lines)?.seeds ?? '?'} seeds, ${failing.length} failing${failing.length ? ` (skipped for every mutant: ${failing.slice(0, 20).join(', ')}${failing.length > 20 ? ', ...' : ''})` : ''}`,
  );

  const rows = new Map();
  await pool(mutants, args.jobs, async (mutant) => {
    const copy = mutate(mutant, base, options);
    if (typeof copy === 'string') {
      rows.set(mutant, { seed: '-', check: copy, seeds: 0 });
      console.log(`${mutant.name}: ${copy}`);
      return;
    }
    const t = performance.now();
    const run = await runSim(copy.pkg, planOf(mutant, args, skipFile));
    const summary = lastJson(run.lines);
    const violation = summary?.violation;
    const known = args.subset && violation && !mutant.subset.seeds.includes(violation.seed);
    rows.set(mutant, {
      seed: violation ? String(violation.seed) : 'SURVIVED',
      check: violation ? violation.check : '-',
      message: violation?.message ?? '',
      seeds: summary?.seeds ?? 0,
      note: known
        ? `not found by its recorded seeds ${mutant.subset.seeds.join(', ')}: record ${violation.seed}`
        : '',
    });
    console.log(
      `${mutant.name}: ${violation ? `found by seed ${violation.seed} (${violation.check})` : 'SURVIVED'} after ${summary?.seeds ?? '?'} seeds, ${((performance.now() - t) / 1000).toFixed(1)} s${known ? ` (${rows.get(mutant).note})` : ''}`,
    );
    if (args.keep) console.log(`  kept: ${copy.dir}`);
    else rmSync(copy.dir, { recursive: true, force: true });
  });
  if (!args.keep) rmSync(base, { recursive: true, force: true });

  const header = [
    'mutant',
    'file',
    args.subset ? 'its check' : 'check that failed',
    'found by seed',
    'seeds run',
  ];
  const table = mutants.map((m) => {
    const r = rows.get(m);
    return [
      m.name,
      m.file,
      args.subset && r.seed !== '-' ? m.subset.check : r.check,
      r.seed,
      String(r.seeds),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log('');
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of table) console.log(line(row));
  console.log(
    '\nWhat each seed found (replay in the mutated copy with --keep, then `node <copy>/packages/core/sim-dist/sim/cli.js --seed S`):',
  );
  for (const m of mutants) if (rows.get(m).message) console.log(`- ${m.name}: ${rows.get(m).message}`);
  const bad = mutants.filter((m) => rows.get(m).seed === 'SURVIVED' || rows.get(m).seed === '-');
  console.log(`\n${((performance.now() - started) / 60000).toFixed(1)} min in all`);
  if (bad.length > 0) {
    console.log(
      `mutants: ${bad.length} of ${mutants.length} not found (${bad.map((m) => m.name).join('; ')}): a check has lost its teeth, or a pattern no longer matches`,
    );
  }
  process.exitCode = bad.length > 0 ? 1 : 0;
}

if (!existsSync(join(core, 'node_modules', '.bin', 'tsc'))) {
  console.error('mutants: run pnpm install first (packages/core/node_modules/.bin/tsc is missing)');
  process.exit(2);
}
await main();
