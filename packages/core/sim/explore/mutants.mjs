#!/usr/bin/env node
// Proof that the exhaustive check has teeth: each mutant is one exact search/replace in one file
// of the writer state machine (src/protocol), re-introducing a bug a review or the simulator
// found in the drivers, or one the redesign rules out. The explorer is built once (tsc, in
// place, as `pnpm explore` does); each mutant is a copy of that build with its one file
// transpiled again from the mutated source, explored on its configuration until an invariant
// breaks. A mutant that survives, breaks another invariant than the one named, or whose pattern
// no longer matches (the machine moved on: update it here), fails the run.
//
//   pnpm explore:mutants [--only name,name]
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const core = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ts = createRequire(join(core, 'package.json'))('typescript');

const TWO = 'lock, two writers, finite';
const TIMING = 'lock, two writers, timing';
const EXTEND_TIMING = 'lock, fail-closed, extend to finite, timing';
const FAIL_CLOSED = 'operator forceRelease';
const HAND_OVER = 'lock, hand-over to a local waiter';
const HAND_OVER_FAIL_CLOSED = 'lock, fail-closed hand-over';
const DYNAMO = "DynamoDB's one-request claim";
const SHORT = 'lock, short leases, one fault, one call';
const SLOT_OUTSIDE = 'semaphore of limit 2, one slot held outside';
const PASSES = 'lock, local passes on reserved tokens';
const UPDATES = 'lock, updates with faults';
const SUSPEND = 'lock, a suspended holder';
const SHORT_SUSPEND = 'lock, a holder suspended for half its lease';
const OWN_FORCE = "lock, a forceRelease by the holder's own client";
const WATCH = 'holders nothing renews watch the record';
const KEEP = 'releases that keep the lease a while';

/** Each: where, what to find (exactly once), what instead; the configuration and the invariant that must catch it. */
const MUTANTS = [
  {
    name: 'hand-over keeps the token',
    file: 'writer-step.ts',
    search: 'const token = Math.max(lease?.token ?? 0, known?.token ?? 0) + 1;',
    replace: 'const token = Math.max(lease?.token ?? 0, known?.token ?? 0);',
    config: HAND_OVER,
    check: 'token-order',
  },
  {
    name: 'the holder trusts its lease past the deadline',
    file: 'writer-state.ts',
    search: 'const deadline = state.lease?.deadline ?? Number.NEGATIVE_INFINITY;',
    replace: 'const deadline = state.lease ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;',
    config: TIMING,
    depth: 20,
    check: 'exclusion',
  },
  {
    name: 'arrivedInTime always true (a claim answered after its lease ended is handed out)',
    file: 'write-outcome.ts',
    search: 'if (now >= deadline) return { ...s, lease: null };',
    replace: 'if (now < -1) return { ...s, lease: null };',
    config: TIMING,
    depth: 20,
    check: 'token-order',
  },
  {
    name: 'renewal timed from when it lands',
    file: 'write-outcome.ts',
    search: ': deadlineFrom(pending.sentAt, leaseMs, s.terms.marginMs, now - pending.sentAt);',
    replace: ': deadlineFrom(now, leaseMs, s.terms.marginMs, 0);',
    config: TIMING,
    depth: 20,
    check: 'exclusion',
  },
  {
    name: 'record unchanged after a timeout taken as not applied',
    file: 'write-outcome.ts',
    search: 'if (unchanged && pending.mayHaveLanded) {',
    replace: 'if (unchanged && pending.mayHaveLanded && now < 0) {',
    config: FAIL_CLOSED,
    check: 'held-for-ever',
  },
  {
    name: 'a shortening renewal keeps the later deadline',
    file: 'writer-state.ts',
    search: "if (write?.intent.kind !== 'renew') return deadline;",
    replace: 'return deadline;',
    config: EXTEND_TIMING,
    check: 'exclusion',
  },
  {
    name: 'a renewal that may land after the loss is not given back',
    file: 'writer-step.ts',
    search: "if (pending) return goal.kind === 'giveBack' ? s : { ...s, goal: { kind: 'giveBack' } };",
    replace: "if (pending) return end(s, 'lost', out);",
    config: FAIL_CLOSED,
    check: 'held-for-ever',
  },
  {
    name: 'a refused shortening of a fail-closed lease ends the writer',
    file: 'write-outcome.ts',
    search: "if (intent.kind === 'renew' && !answersChange(s, pending) && !releasing) return s;",
    replace:
      "if (intent.kind === 'renew' && s.goal.kind === 'giveBack') return lose(s, out, false);\n    if (intent.kind === 'renew' && !answersChange(s, pending) && !releasing) return s;",
    config: FAIL_CLOSED,
    check: 'held-for-ever',
  },
  {
    name: 'an abandoned claim is never settled',
    file: 'writer-step.ts',
    search: "      dropChange(s, out);\n      return { ...s, goal: { kind: 'giveBack' } };",
    replace:
      "      dropChange(s, out);\n      return end({ ...s, goal: { kind: 'giveBack' } }, 'gaveUp', out);",
    config: FAIL_CLOSED,
    check: 'held-for-ever',
  },
  {
    name: 'a hand-over that lands after its waiter left strands the key',
    file: 'writer-step.ts',
    search: "if (event.type !== 'handedOver') return { state, actions: [] };",
    replace: 'return { state, actions: [] };',
    config: HAND_OVER_FAIL_CLOSED,
    check: 'held-for-ever',
  },
  {
    name: 'a release again with other data resolves on the earlier data',
    file: 'write-outcome.ts',
    search: "if (s.goal.kind === 'release' && s.goal.data !== undefined && s.goal.data !== intent.data) {",
    replace: 'if (now < 0) {',
    config: TWO,
    check: 'data',
  },
  {
    name: 'ownership by the writer alone, ignoring which write',
    file: 'write-outcome.ts',
    search: 'if (view.version !== null && (view.lastSeq === pending.seq || view.own?.seq === pending.seq)) {',
    replace: 'if (view.version !== null && (view.lastSeq === pending.seq || view.own !== undefined)) {',
    config: TWO,
    check: 'data',
  },
  {
    name: 'two writes in flight for one writer',
    file: 'writer-step.ts',
    search: "  if (pending) {\n    if (pending.status !== 'unknown') return s;",
    replace: "  if (pending && pending.status !== 'sent') {\n    if (pending.status !== 'unknown') return s;",
    config: TWO,
    check: 'one-write',
  },
  {
    name: 'a transition row deleted (a refused write is ignored)',
    file: 'writer-step.ts',
    search: "    case 'refused': {\n",
    replace: "    case 'refused': {\n      return s;\n",
    config: TWO,
    check: 'unanswered',
  },
  {
    name: 'a refused write after an unknown copy taken as not applied',
    file: 'writer-step.ts',
    search: "      if (pending.mayHaveLanded) {\n        if (pending.status !== 'sent') return s;",
    replace: "      if (false) {\n        if (pending.status !== 'sent') return s;",
    config: FAIL_CLOSED,
    check: 'held-for-ever',
  },
  {
    name: 'a one-request claim counted from its answer',
    file: 'write-outcome.ts',
    search: ': deadlineFrom(pending.sentAt, leaseMs, s.terms.marginMs, now - pending.sentAt);',
    replace:
      ": deadlineFrom(pending.condition.kind === 'claimable' ? now : pending.sentAt, leaseMs, s.terms.marginMs, 0);",
    config: DYNAMO,
    check: 'exclusion',
  },
  {
    name: 'a lost lease is not told to its holder',
    file: 'write-outcome.ts',
    search: "if (goal.kind === 'hold') out.push({ type: 'lost', why: 'taken' });",
    replace: '',
    config: SHORT,
    depth: 13,
    check: 'told',
  },
  {
    name: 'a release that finds the key moved on says the caller still holds it',
    file: 'write-outcome.ts',
    search: 'return lose(s, out, callers && pending.mayHaveLanded);',
    replace:
      "if (intent.kind !== 'renew') { out.push({ type: 'failed', op, why: 'refused', maybeApplied: true }); return end({ ...s, lease: null }, 'lost', out); }\n  return lose(s, out, false);",
    config: SHORT,
    depth: 13,
    check: 'told',
  },
  {
    name: 'a semaphore writer claims a slot without judging it free',
    file: 'writer-step.ts',
    search: 'if (known !== undefined && !known.claimable) {',
    replace: 'if (known !== undefined && !known.claimable && known.version === null) {',
    config: SLOT_OUTSIDE,
    depth: 12,
    check: 'exclusion',
  },
  {
    name: 'a local pass takes a token that was never reserved',
    file: 'writer-step.ts',
    search: 'if (lease.token >= lease.top ||',
    replace: 'if (lease.token > lease.top ||',
    config: PASSES,
    check: 'token-order',
    depth: 12,
  },
  {
    name: "a heartbeat after a local pass stores the first caller's token",
    file: 'writer-step.ts',
    search: "const intent = { kind: 'renew', leaseMs: s.terms.leaseMs, token: s.lease.token } as const;",
    replace:
      "const intent = { kind: 'renew', leaseMs: s.terms.leaseMs, token: s.known?.own?.token ?? s.lease.token } as const;",
    config: PASSES,
    check: 'holder-token',
    depth: 12,
  },
  {
    name: 'a heartbeat answers a change by its lease length (its data unchecked)',
    file: 'write-outcome.ts',
    search: "  return goal.kind === 'hold' && write !== null && goal.change?.seq === write.seq;",
    replace:
      "  return goal.kind === 'hold' && write !== null && goal.change !== undefined && write.intent.kind === 'renew' && write.intent.leaseMs === goal.change.leaseMs;",
    config: UPDATES,
    check: 'data',
    depth: 12,
  },
  {
    name: 'a suspend is ignored (the holder trusts a lease its clock did not see run out)',
    file: 'writer-step.ts',
    search: '        deadline: s.lease.deadline - e.ms,',
    replace: '        deadline: s.lease.deadline,',
    config: SUSPEND,
    check: 'exclusion',
  },
  {
    name: 'a suspend shorter than the lease leaves its deadline where the monotonic clock put it',
    file: 'writer-step.ts',
    search: '        deadline: s.lease.deadline - e.ms,',
    replace:
      '        deadline: e.ms >= s.lease.deadline - e.now ? s.lease.deadline - e.ms : s.lease.deadline,',
    config: SHORT_SUSPEND,
    check: 'exclusion',
  },
  {
    name: 'a write in flight across a suspend counts from its send by the monotonic clock',
    file: 'writer-step.ts',
    search: '      const pending = s.pending && { ...s.pending, sentAt: s.pending.sentAt - e.ms };',
    replace: '      const pending = s.pending;',
    config: SHORT_SUSPEND,
    check: 'exclusion',
  },
  {
    name: "a forceRelease of the writer's own client leaves its lease trusted",
    file: 'writer-step.ts',
    search: 'const lease = s.lease && { ...s.lease, deadline: Math.min(s.lease.deadline, e.now) };',
    replace: 'const lease = s.lease;',
    config: OWN_FORCE,
    check: 'exclusion',
  },
  {
    name: 'a holder nothing renews never looks at the record',
    file: 'writer-step.ts',
    search:
      "out.push({ type: 'arm', timer: 'verify', at: Math.max(now, lease.confirmedAt + terms.verifyMs) });",
    replace: '',
    config: WATCH,
    check: 'unwatched',
  },
  {
    name: "a holder's look at a record freed under it is ignored",
    file: 'writer-step.ts',
    search: 'return lose(s, out, false);\n}',
    replace: 'return { ...s, lease: { ...lease, confirmedAt: now } };\n}',
    config: WATCH,
    check: 'exclusion',
    depth: 30,
  },
  {
    name: 'a release that keeps the lease is told it did not land when the deadline passes with its write in flight',
    file: 'writer-step.ts',
    search: ' || isReleaseWrite(s, pending);',
    replace: ';',
    config: KEEP,
    check: 'data',
    depth: 13,
  },
  {
    name: 'a release that keeps the lease is told it did not land when the record moved on after its write may have',
    file: 'write-outcome.ts',
    search: ' || answersChange(s, pending) || releasing;',
    replace: ' || answersChange(s, pending);',
    config: KEEP,
    check: 'data',
    depth: 13,
  },
  {
    name: 'a release whose outcome is unknown keeps its caller waiting for the store',
    file: 'writer-step.ts',
    search: "out.push({ type: 'failed', op: goal.kind, why: 'unknown', maybeApplied: true });",
    replace: '',
    // Two faults: the release's answer is lost, then the read that would resolve it fails.
    config: TWO,
    check: 'kept-waiting',
  },
  {
    name: 'a claim the store refused is sent again at once',
    file: 'writer-step.ts',
    search: "if (claiming || (pending.intent.kind !== 'claim' && s.goal.kind === 'giveBack')) {",
    replace: "if (pending.intent.kind !== 'claim' && s.goal.kind === 'giveBack') {",
    config: SHORT,
    check: 'tight-loop',
    depth: 13,
  },
  {
    name: 'a giving back the store refused is sent again at once',
    file: 'writer-step.ts',
    search: "if (claiming || (pending.intent.kind !== 'claim' && s.goal.kind === 'giveBack')) {",
    replace: 'if (claiming) {',
    config: HAND_OVER_FAIL_CLOSED,
    check: 'tight-loop',
    depth: 14,
  },
];

const { values } = parseArgs({ options: { only: { type: 'string' } } });
const only = values.only?.split(',');
const chosen = MUTANTS.filter((mutant) => !only || only.includes(mutant.name));

execFileSync(
  process.execPath,
  [join(core, 'node_modules/typescript/bin/tsc'), '-p', join(core, 'tsconfig.sim.json')],
  {
    stdio: 'inherit',
  },
);

function transpile(source) {
  return ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, sourceMap: false },
  }).outputText;
}

/** Runs one mutant: a string saying what went wrong, or undefined when the named check caught it. */
function run(mutant) {
  const path = join(core, 'src/protocol', mutant.file);
  const source = readFileSync(path, 'utf8');
  const at = source.indexOf(mutant.search);
  if (at < 0 || source.indexOf(mutant.search, at + 1) >= 0) {
    return Promise.resolve(`its pattern matches ${at < 0 ? 'nothing' : 'more than once'} in ${mutant.file}`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'latch-explore-mutant-'));
  cpSync(join(core, 'sim-dist'), join(dir, 'sim-dist'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  const mutated = source.replace(mutant.search, mutant.replace);
  writeFileSync(join(dir, 'sim-dist/src/protocol', mutant.file.replace(/\.ts$/, '.js')), transpile(mutated));
  const depth = mutant.depth ?? 16;
  const args = [
    join(dir, 'sim-dist/sim/explore/cli.js'),
    '--config',
    mutant.config,
    '--depth',
    String(depth),
  ];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => {
      rmSync(dir, { recursive: true, force: true });
      const found = output.match(/VIOLATION (\S+):/)?.[1];
      if (code === 0) resolve(`survived (${output.trim().split('\n')[0]})`);
      else if (found !== mutant.check)
        resolve(`broke ${found ?? 'the run'} instead of ${mutant.check}: ${output.slice(0, 600)}`);
      else resolve(undefined);
      mutant.output = output;
    });
  });
}

let failures = 0;
const queue = [...chosen];
async function worker() {
  for (let mutant = queue.shift(); mutant; mutant = queue.shift()) {
    const started = Date.now();
    const problem = await run(mutant);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    if (problem) {
      failures++;
      console.log(`NOT FOUND  ${mutant.name}: ${problem}`);
    } else {
      const states = mutant.output.match(/: (\d+) states/)?.[1];
      console.log(
        `found      ${mutant.name} | ${mutant.check} | ${mutant.config} | ${states} states | ${seconds} s`,
      );
    }
  }
}
await Promise.all([worker(), worker()]);
console.log(`explore mutants: ${chosen.length - failures} of ${chosen.length} found`);
process.exit(failures === 0 ? 0 : 1);
