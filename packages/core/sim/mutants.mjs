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
  // The lease protocol (src/protocol: the writer's pure state machine) and its driver
  // (engine/cas/writer-driver.ts). Where the old bug's code is gone, the entry says which bug
  // it stands for.
  {
    name: 'hand-over keeps the token',
    file: 'src/protocol/writer-step.ts',
    search: '      const token = Math.max(lease?.token ?? 0, known?.token ?? 0) + 1;\n',
    replace: '      const token = Math.max(lease?.token ?? 0, known?.token ?? 0);\n',
    subset: { check: 'fencing-token', seeds: [1, 2, 3] },
  },
  {
    // The machine conditions a release on its lease's version; the old bug read the record and
    // freed it at whatever version it found (another holder's lease too).
    name: 'release without the version check',
    file: 'src/engine/cas/writer-driver.ts',
    search:
      "    const record = recordFor(base?.record ?? null, intent, write);\n    const storeCondition: WriteCondition =\n      condition.kind === 'absent' ? { absent: true } : { version: condition.version };\n",
    replace:
      "    let record = recordFor(base?.record ?? null, intent, write);\n    let storeCondition: WriteCondition =\n      condition.kind === 'absent' ? { absent: true } : { version: condition.version };\n    const latest =\n      intent.kind === 'release' && limit === 1\n        ? await this.options.store.read(this.options.key).catch(() => null)\n        : null;\n    if (latest) {\n      record = { ...latest.record, holder: null, writeId: write.writeId };\n      if (intent.data !== undefined) record.data = JSON.parse(intent.data);\n      storeCondition = { version: latest.version };\n    }\n",
  },
  {
    // Was the list keeper's checkDeadline (client/lease-keeper.ts): the deadline is the machine's now.
    name: 'no renewal deadline (the lease never expires for its holder)',
    file: 'src/protocol/writer-step.ts',
    search: '  if (!s.lease || now < effectiveDeadline(s)) return s;\n',
    replace: '  if (!s.lease || now < effectiveDeadline(s) || s.lease) return s;\n',
    subset: { check: 'taken-away-abort', seeds: [2, 5, 10] },
  },
  {
    // Was `arrivedInTime` always true (client/lease-deadline.ts): a claim that landed past its
    // deadline is handed to the caller instead of being renewed first.
    name: 'a claim that landed too late is handed out',
    file: 'src/protocol/write-outcome.ts',
    search: '      if (now >= deadline) return { ...s, lease: null };\n',
    replace: '      if (pending.distrusted) return { ...s, lease: null };\n',
    // Was found by the liveness check; now the Lock is handed a writer that has already ended
    // (past its deadline in the same step), holds on, and the exclusion check finds it.
  },
  {
    // A lock's renewal (a slot's has its own mutant below) trusted from its answer, not its send.
    name: 'renewal timed from when it lands',
    file: 'src/protocol/write-outcome.ts',
    search: '      : deadlineFrom(pending.sentAt, leaseMs, s.terms.marginMs, now - pending.sentAt);\n',
    replace:
      "      : deadlineFrom(intent.kind === 'renew' && !s.terms.slot ? now : pending.sentAt, leaseMs, s.terms.marginMs, now - pending.sentAt);\n",
  },
  {
    name: 'claim any lease 10 ms after its last write',
    file: 'src/engine/cas/claimable.ts',
    search:
      '  if (!holder) return true;\n  if (holder.leaseMs === null) return false;\n  if (parts.clock.mode',
    replace:
      '  if (!holder || holder.renewedAt < parts.clock.time.now() - 10) return true;\n  if (holder.leaseMs === null) return false;\n  if (parts.clock.mode',
    subset: { check: 'fenced-write', seeds: [1, 2, 4] },
  },
  {
    // The waiter's lease counts from the hand-over's first send (any copy of it may have landed).
    name: 'review 1: a landed hand-over counted from when it was learned',
    file: 'src/protocol/write-outcome.ts',
    search: '    sentAt: pending.sentAt,\n',
    replace: '    sentAt: now,\n',
  },
  {
    // Was resolved-write.ts rethrowing the failed read-back's error (maybeApplied false): the
    // machine now tells a change's caller when the read that would resolve it fails.
    name: 'review 2a: a change whose read-back failed is reported as not applied',
    file: 'src/protocol/writer-step.ts',
    search: "    out.push({ type: 'failed', op: 'extend', why: 'unknown', maybeApplied: true });\n",
    replace: "    out.push({ type: 'failed', op: 'extend', why: 'refused', maybeApplied: false });\n",
    subset: { check: 'data', seeds: [13, 20] },
  },
  {
    // Was resolved-write.ts: the record still at the write's condition after a timeout means
    // the write may still land; this takes it as certainly refused.
    name: 'review 2b: record unchanged after a timeout taken as not applied',
    file: 'src/protocol/write-outcome.ts',
    search: '  if (unchanged && pending.mayHaveLanded) {\n',
    replace:
      '  if (unchanged && pending.mayHaveLanded)\n    return notApplied(state, { ...pending, mayHaveLanded: false }, undefined, out);\n  if (unchanged && pending.mayHaveLanded) {\n',
  },
  {
    // Was claim.ts: a try whose one-request claim came back unknown answers "held" (busy).
    name: 'review 2b: a try says busy after a maybe-applied one-request claim',
    file: 'src/engine/cas/writer-driver.ts',
    search: '      this.#claimMayLandLate = true;\n      this.#claimUnknownThisTry = true;\n',
    replace: '      this.#claimMayLandLate = true;\n',
  },
  {
    // Was abandoned-claim.ts never settling: settling is now the writer's own next step, so the
    // same bug is a writer whose caller gave up ending without giving back what it may win.
    name: 'review 2: a writer whose caller gave up ends without giving back its claim',
    file: 'src/protocol/writer-step.ts',
    search:
      "      if (s.goal.kind !== 'acquire' && s.goal.kind !== 'hold') return s;\n      dropChange(s, out);\n",
    replace:
      "      if (s.goal.kind === 'acquire') return end(s, 'gaveUp', out);\n      if (s.goal.kind !== 'acquire' && s.goal.kind !== 'hold') return s;\n      dropChange(s, out);\n",
  },
  {
    // Was the keeper's lowerDeadline at a renewal's send (client/lease-keeper.ts).
    name: 'review 3: a shortening renewal keeps the later deadline',
    file: 'src/protocol/writer-state.ts',
    search: "  if (write?.intent.kind !== 'renew') return deadline;\n",
    replace: "  if (write?.intent.kind !== 'renew' || write.intent.kind === 'renew') return deadline;\n",
  },
  {
    // Was own-lease.ts nextToken: the floor is what the driver tells the writer before its claim.
    name: 'review 4: new tokens ignore the floor this client saw',
    file: 'src/engine/cas/writer-driver.ts',
    search:
      '        const floor =\n          view.token < seen.tokenFloor ? { token: seen.tokenFloor, belowFloor: true as const } : {};\n',
    replace: '        const floor = {};\n',
  },
  {
    // Was the keeper's landedAfterLoss (client/lease-keeper.ts): a write in flight when the
    // deadline passes is forgotten instead of given back should it land.
    name: 'review 7: a renewal landing after the loss is not settled',
    file: 'src/protocol/writer-step.ts',
    search: "  if (pending) return goal.kind === 'giveBack' ? s : { ...s, goal: { kind: 'giveBack' } };\n",
    replace: "  if (pending) return end(s, 'lost', out);\n",
  },
  {
    // A release of unknown outcome, read back: its own write id in the record is not recognised.
    name: 'review 7: our own landed release is taken as a loss',
    file: 'src/protocol/write-outcome.ts',
    search:
      '  if (view.version !== null && (view.lastSeq === pending.seq || view.own?.seq === pending.seq)) {\n',
    replace:
      "  if (view.version !== null && ((view.lastSeq === pending.seq && pending.intent.kind !== 'release') || view.own?.seq === pending.seq)) {\n",
  },
  {
    // A hand-over that landed too late to trust: the waiter goes back in front of this queue
    // (which may have been dropped) and nobody polls for it.
    name: 'review 5: late hand-over strands the waiter',
    file: 'src/waiting/key-queue.ts',
    search:
      '    lock.markReleased();\n    if (!next.settled) this.host.requeue(lock.key, this.limit, next);\n',
    replace:
      '    lock.markReleased();\n    if (!next.settled && !this.waiters.includes(next)) this.waiters.unshift(next);\n',
    // In the subset for the liveness check, which no cheaper mutant reaches now (1 seed of 350).
  },
  {
    // Was the keeper's verify timer (client/lease-keeper.ts): the machine arms it now.
    name: 'review 6: fail-closed locks never verify ownership',
    file: 'src/protocol/writer-step.ts',
    search: '    if (terms.verifyMs !== undefined && lease) {\n',
    replace: '    if (terms.verifyMs !== undefined && lease && !nothingRenews(terms)) {\n',
  },
  {
    name: 'isHeld does not check the deadline',
    file: 'src/client/lock.ts',
    search: '  get isHeld(): boolean {\n    this.checkDeadline();\n',
    replace: '  get isHeld(): boolean {\n',
    subset: { check: 'exclusion', seeds: [2, 13, 14] },
  },
  // Semaphores and acquireAll (issue 18).
  {
    // Was slot-claim.ts: whether a slot is free is the driver's judgement now, made twice (when
    // the claim is decided, and again when it is written), both from the holders it counts live.
    name: 'semaphore: a full record takes one more holder (one live holder not counted)',
    file: 'src/engine/cas/writer-driver.ts',
    search: '    if (this.options.liveSlots) return this.options.liveSlots(current);\n',
    replace: '    if (this.options.liveSlots) return this.options.liveSlots(current).slice(1);\n',
  },
  {
    name: 'semaphore: a claim keeps the holders whose leases ended',
    file: 'src/engine/cas/writer-records.ts',
    search: '      const kept = write.limit > 1 ? [...(write.live ?? [])] : [];\n',
    replace: '      const kept = write.limit > 1 ? others : [];\n',
    subset: { check: 'slot-count', seeds: [4, 5, 6] },
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
    search: '    const id = `${key}\\n${holder.lockId}\\n${holder.writeId}`;\n',
    replace: '    const id = `${key}\\n${holder.lockId}`;\n',
  },
  {
    // Was slot-write.ts: a holder's next write goes by the version others' writes left, but is
    // built on the record as this holder last knew it (their slots' changes overwritten).
    name: "semaphore: a holder's write is not rebuilt on the record as it is",
    file: 'src/engine/cas/writer-driver.ts',
    search: '    if (current) this.#records.set(current.version, current);\n',
    replace:
      '    const stale = this.options.limit > 1 && this.#state.lease ? this.record : undefined;\n    if (current) this.#records.set(current.version, stale ? { version: current.version, record: stale } : current);\n',
    subset: { check: 'slot-write', seeds: [4, 5, 6] },
  },
  {
    name: "semaphore: a slot's renewal timed from when it lands",
    file: 'src/protocol/write-outcome.ts',
    search: '      : deadlineFrom(pending.sentAt, leaseMs, s.terms.marginMs, now - pending.sentAt);\n',
    replace:
      "      : deadlineFrom(intent.kind === 'renew' && s.terms.slot ? now : pending.sentAt, leaseMs, s.terms.marginMs, now - pending.sentAt);\n",
  },
  {
    // Was slot-claim.ts: a slot's claim is the machine's, by version.
    name: "semaphore: a new slot takes the record's token",
    file: 'src/protocol/writer-step.ts',
    search: "  return send(s, { kind: 'claim', token: (known?.token ?? 0) + 1 }, condition, now, out);\n",
    replace:
      "  return send(s, { kind: 'claim', token: s.terms.slot && known?.version ? known.token : (known?.token ?? 0) + 1 }, condition, now, out);\n",
  },
  {
    name: 'acquireAll keeps the locks it took when it fails',
    file: 'src/client/lock-set.ts',
    search: '  } catch (error) {\n    await Promise.allSettled(taken.map((lock) => lock.releaseUnused()));\n',
    replace: '  } catch (error) {\n',
    subset: { check: 'lock-set', seeds: [4, 5] },
  },
  {
    name: 'acquireAll returns a set with a lock lost on the way',
    file: 'src/client/lock-set.ts',
    search: '  if (set.signal.aborted) {\n',
    replace: '  if (set.signal.aborted && taken.length === 0) {\n',
  },
  // Passing a lock among one client's callers with no write (reserved fencing tokens): the
  // machine's `pass` event (passToken) now, not local-pass.ts.
  {
    name: 'local pass: the next caller keeps the token',
    file: 'src/protocol/writer-step.ts',
    search: '  return lease.token + 1;\n',
    replace: '  return lease.token;\n',
  },
  {
    name: 'local pass: one token past the reserved ones',
    file: 'src/protocol/writer-step.ts',
    search: '  if (lease.token >= lease.top || (s.known?.token ?? 0) > lease.top) return undefined;\n',
    replace: '  if (lease.token > lease.top || (s.known?.token ?? 0) > lease.top) return undefined;\n',
  },
  {
    // Was a new LeaseKeeper per Lock (client/lock.ts): the writer keeps one deadline for the
    // lease; this recomputes it at the pass from the lease's last confirmation, without the
    // margin a slow write took off.
    name: "local pass: the lease's deadline is recomputed at the pass",
    file: 'src/protocol/writer-step.ts',
    search: '      return { ...s, lease: { ...s.lease, token } };\n',
    replace:
      '      return { ...s, lease: { ...s.lease, token, deadline: deadlineFrom(s.lease.confirmedAt, e.leaseMs, s.terms.marginMs) } };\n',
  },
  {
    name: 'local pass: the next caller trusts the lease from the pass on',
    file: 'src/protocol/writer-step.ts',
    search: '      return { ...s, lease: { ...s.lease, token } };\n',
    replace:
      '      return { ...s, lease: { ...s.lease, token, deadline: e.now + 0.9 * (e.leaseMs ?? 0) } };\n',
  },
  {
    name: 'local pass: a lock whose handle was read passes on with no write',
    file: 'src/client/lock.ts',
    search: "    if (this.state !== 'releasing' || this.handleShared) return false;\n",
    replace: "    if (this.state !== 'releasing') return false;\n",
    subset: { check: 'handle', seeds: [1, 2, 5] },
  },
  {
    name: 'local pass: a handle read after the pass releases by its token alone',
    file: 'src/client/lock-client.ts',
    search: '    if (fields.passedOn) throw passedOnError(key);\n',
    replace: '\n',
  },
  {
    name: 'local pass: a renewal writes the holder before the last one',
    file: 'src/protocol/writer-step.ts',
    search:
      "    const intent = { kind: 'renew', leaseMs: s.terms.leaseMs, token: s.lease.token } as const;\n",
    replace:
      "    const intent = { kind: 'renew', leaseMs: s.terms.leaseMs, token: s.lease.token > 1 ? s.lease.token - 1 : s.lease.token } as const;\n",
  },
  {
    // Was own-lease.ts nextToken: the record a claim writes is built by recordFor.
    name: "local pass: a claim starts above the holder's token, not the reserved ones",
    file: 'src/engine/cas/writer-records.ts',
    search: '      const claimed = intent.token ?? token + 1;\n',
    replace:
      '      const claimed = write.limit === 1 && entries[0] ? entries[0].token + 1 : (intent.token ?? token + 1);\n',
  },
  // One mutant for each check the list above leaves without one. (Three mutants left the subset on
  // 2026-12-07, their recorded seeds no longer finding them once the sweep fixes moved the runs:
  // a claim that landed too late, review 5 and the suspend one; the explorer's mutants, also in
  // `pnpm test`, catch the late claim, the suspend and the liveness of a waiter.)
  {
    name: 'typed errors: a busy acquire with waitMs 0 throws a plain Error',
    file: 'src/client/lock-client.ts',
    search: '        throw new LockTimeoutError(key, 0, attempt.holder, { limit });\n',
    replace: "        throw new Error('lock ' + key + ' is busy, limit ' + limit);\n",
    subset: { check: 'untyped-error', seeds: [1, 2, 3] },
  },
  {
    name: 'limits: a client refuses its own limit while it holds or awaits the key',
    file: 'src/client/lock-client.ts',
    search: '  if (queue.limit === limit || queue.idle) return;\n',
    replace: '  if (queue.idle) return;\n',
    subset: { check: 'limit-mismatch', seeds: [1, 2, 3] },
  },
  {
    // What renaming the field a cast read used to do: every lock looks released, so nothing is
    // ever a live holder and the exclusion check passes without checking anything.
    name: "blinded: the seam never reports a lock as 'held'",
    file: 'src/client/lock.ts',
    search: '      phase: lock.state,\n',
    replace: "      phase: lock.state === 'held' ? 'released' : lock.state,\n",
    subset: { check: 'vacuous', seeds: [1, 2, 4] },
  },
  {
    // A claim answered after a machine suspend: on time by the stopped monotonic clock, while
    // another client took the key over meanwhile (sweep seed 100391). Was lease-deadline.ts's
    // wall-clock check; the machine now dates a write in flight across a suspend that much earlier.
    name: 'suspend: a lease is handed out without the wall-clock check',
    file: 'src/protocol/writer-step.ts',
    search: '      const pending = s.pending && { ...s.pending, sentAt: s.pending.sentAt - e.ms };\n',
    replace: '      const pending = s.pending;\n',
    // Only seeds with suspends can find it (a quarter of them); since a suspend shortens the lease
    // instead of ending it, seed 794 no longer does: tests suspend, writer-suspend, writer-deadline do.
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
