#!/usr/bin/env node
// Proof that the simulator has teeth: for each mutant (one exact search/replace in one core
// source file, reintroducing a bug the review found or the audit named), copy core to a
// scratch directory, apply the patch, build the simulator there and run the CI seed budget,
// stopping at the first failing seed. Seeds the unmutated code already fails are skipped for
// every mutant, so a mutant only counts as found by a seed that passes without it.
//
//   pnpm sim:mutants [--only name,name] [--seeds N] [--minutes M] [--keep] [--ignore REGEX]
//
// --ignore passes over violations matching REGEX ("check: message") in every run, baseline
// included: only to see past a known core bug while it is being fixed.
//
// Prints: mutant | file | found by seed | check that failed | seeds run.
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
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const core = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = join(core, '..', '..');

/** Each mutant: where, what to find (exactly once), what to put instead. */
const MUTANTS = [
  {
    name: 'hand-over keeps the token',
    file: 'src/engine/cas/lease-protocol.ts',
    search: 'const token = Math.max(base.token, this.known.tokenFloor(lease.key)) + 1;',
    replace: 'const token = base.token;',
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
  },
  {
    name: 'arrivedInTime always true',
    file: 'src/client/lease-deadline.ts',
    search: 'export function arrivedInTime(lease: LeaseState, leaseMs: number, now: number): boolean {\n',
    replace:
      'export function arrivedInTime(lease: LeaseState, leaseMs: number, now: number): boolean {\n  if (leaseMs > -1) return true;\n',
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
  },
  {
    name: 'review 1: a landed hand-over counted from when it was learned',
    file: 'src/engine/cas/lease-protocol.ts',
    search:
      '    const leaseStart = earlier ? Math.min(sentAt, next.firstSentAt ?? Number.NEGATIVE_INFINITY) : sentAt;\n',
    replace: '    const leaseStart = sentAt;\n',
  },
  {
    name: "review 2a: the re-read's error rethrown as not applied",
    file: 'src/engine/cas/resolved-write.ts',
    search: '    throw stillUnknown(key, unsure ?? error, error);\n',
    replace: '    throw error;\n',
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
    search: '      (found) => found.holder === null,\n',
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
  },
  // Semaphores and acquireAll (issue 18).
  {
    name: 'semaphore: a full record takes one more holder',
    file: 'src/engine/cas/slot-claim.ts',
    search: '    if (live.length >= limit) {\n',
    replace: '    if (live.length > limit) {\n',
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
  },
  {
    name: 'local pass: a handle read after the pass releases by its token alone',
    file: 'src/client/lock-client.ts',
    search: '    if (fields.passedOn) throw handleEnded(key);\n',
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
];

function parseArgs(argv) {
  const args = { only: undefined, seeds: undefined, minutes: undefined, ignore: undefined, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].includes('=') ? argv[i].split('=', 2) : [argv[i], undefined];
    const value = () => inline ?? argv[++i];
    if (flag === '--only') args.only = value().split(',');
    else if (flag === '--seeds') args.seeds = value();
    else if (flag === '--minutes') args.minutes = value();
    else if (flag === '--keep') args.keep = true;
    else if (flag === '--ignore') args.ignore = value();
    else if (flag !== '--') {
      console.error(`mutants: unknown argument ${argv[i]}`);
      process.exit(2);
    }
  }
  return args;
}

/**
 * A scratch copy of core (sources, simulator, configs) with node_modules linked, not copied,
 * made from `from` (the working tree, or the snapshot every run of this script starts from:
 * core may be edited while the script runs, and every mutant must be one patch away from
 * the code the baseline ran).
 */
function scratchCopy(name, from = core) {
  const dir = mkdtempSync(join(tmpdir(), `latch-mutant-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 30)}-`));
  const pkg = join(dir, 'packages', 'core');
  mkdirSync(pkg, { recursive: true });
  cpSync(join(root, 'tsconfig.base.json'), join(dir, 'tsconfig.base.json'));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  for (const entry of ['src', 'sim', 'tsconfig.json', 'tsconfig.sim.json', 'package.json']) {
    cpSync(join(from, entry), join(pkg, entry), { recursive: true });
  }
  symlinkSync(join(core, 'node_modules'), join(pkg, 'node_modules'), 'dir');
  return { dir, pkg };
}

function build(pkg) {
  const tsc = join(core, 'node_modules', '.bin', 'tsc');
  execFileSync(tsc, ['-p', join(pkg, 'tsconfig.sim.json')], { stdio: 'pipe' });
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

function budgetArgs(args) {
  const extra = ['--ci', '--json'];
  if (args.seeds) extra.push(`--seeds=${args.seeds}`);
  if (args.minutes) extra.push(`--minutes=${args.minutes}`);
  if (args.ignore) extra.push(`--ignore=${args.ignore}`);
  return extra;
}

function lastJson(lines) {
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i].startsWith('{"summary"')) return JSON.parse(lines[i]);
  }
  return undefined;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const mutants = MUTANTS.filter((m) => !args.only || args.only.some((o) => m.name.includes(o)));

  // The unmutated code first: seeds it fails say nothing about a mutant.
  console.log('baseline: building and running the CI budget on the unmutated code...');
  const base = scratchCopy('baseline');
  try {
    build(base.pkg);
  } catch (error) {
    console.error(`mutants: core does not compile as it is now:\n${String(error.stdout)}`);
    process.exit(2);
  }
  const baseline = await runSim(base.pkg, [...budgetArgs(args), '--keep-going']);
  const failing = baseline.lines.flatMap((line) => {
    const match = /^seed (\d+): /.exec(line);
    return match ? [Number(match[1])] : [];
  });
  const skipFile = join(base.dir, 'baseline-failing-seeds.json');
  writeFileSync(skipFile, JSON.stringify(failing));
  const baseSummary = lastJson(baseline.lines);
  console.log(
    `baseline: ${baseSummary?.seeds ?? '?'} seeds, ${failing.length} failing${failing.length ? ` (skipped for every mutant: ${failing.slice(0, 20).join(', ')}${failing.length > 20 ? ', ...' : ''})` : ''}`,
  );

  const rows = [];
  for (const mutant of mutants) {
    const { dir, pkg } = scratchCopy(mutant.name, base.pkg);
    const file = join(pkg, mutant.file);
    const source = readFileSync(file, 'utf8');
    const count = source.split(mutant.search).length - 1;
    if (count !== 1) {
      rows.push({ mutant, seed: '-', check: `pattern found ${count} times: update it`, seeds: 0 });
      if (!args.keep) rmSync(dir, { recursive: true, force: true });
      continue;
    }
    writeFileSync(file, source.replace(mutant.search, mutant.replace));
    try {
      build(pkg);
    } catch (error) {
      rows.push({
        mutant,
        seed: '-',
        check: `does not compile: ${String(error.stdout).slice(0, 200)}`,
        seeds: 0,
      });
      if (!args.keep) rmSync(dir, { recursive: true, force: true });
      continue;
    }
    const t = performance.now();
    const run = await runSim(pkg, [...budgetArgs(args), `--skip=${skipFile}`]);
    const summary = lastJson(run.lines);
    const violation = summary?.violation;
    rows.push({
      mutant,
      seed: violation ? String(violation.seed) : 'SURVIVED',
      check: violation ? violation.check : '-',
      message: violation?.message ?? '',
      seeds: summary?.seeds ?? 0,
      wall: ((performance.now() - t) / 1000).toFixed(0),
    });
    console.log(
      `${mutant.name}: ${violation ? `found by seed ${violation.seed} (${violation.check})` : 'SURVIVED'} after ${summary?.seeds ?? '?'} seeds`,
    );
    if (args.keep) console.log(`  kept: ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
  if (!args.keep) rmSync(base.dir, { recursive: true, force: true });

  const header = ['mutant', 'file', 'found by seed', 'check that failed', 'seeds run'];
  const table = rows.map((r) => [r.mutant.name, r.mutant.file, r.seed, r.check, String(r.seeds)]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log('');
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of table) console.log(line(row));
  console.log(
    '\nWhat each seed found (replay in the mutated copy with --keep, then `node <copy>/packages/core/sim-dist/sim/cli.js --seed S`):',
  );
  for (const row of rows) if (row.message) console.log(`- ${row.mutant.name}: ${row.message}`);
  console.log(`\n${((performance.now() - started) / 60000).toFixed(1)} min in all`);
  process.exitCode = rows.some((r) => r.seed === 'SURVIVED' || r.seed === '-') ? 1 : 0;
}

if (!existsSync(join(core, 'node_modules', '.bin', 'tsc'))) {
  console.error('mutants: run pnpm install first (packages/core/node_modules/.bin/tsc is missing)');
  process.exit(2);
}
await main();
