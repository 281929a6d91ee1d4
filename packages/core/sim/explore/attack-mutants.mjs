#!/usr/bin/env node
// Mutants the checker of main misses (see /work/briefs/attack-machine.md): each is run against
// the checker built in --core (default: this package), so the same mutant can be shown to
// survive main's checker and to be caught by the attack branch's.
//   node sim/explore/attack-mutants.mjs [--core /path/to/packages/core] [--only name,name]
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values } = parseArgs({
  options: { core: { type: 'string' }, world: { type: 'string' }, only: { type: 'string' } },
});
// --world: another build's explore-world.js (main's checker) with this branch's configurations.
const core = values.core ?? here;
const ts = createRequire(join(here, 'package.json'))('typescript');

export const ATTACK_MUTANTS = [
  {
    name: 'a lost lease is not told to its holder',
    file: 'write-outcome.ts',
    search: "if (goal.kind === 'hold') out.push({ type: 'lost' });",
    replace: '',
    config: 'attack: lock, short leases',
    depth: 13,
  },
  {
    name: 'a release that finds the key moved says the caller still holds it',
    file: 'write-outcome.ts',
    search: 'return lose(s, out, intent.kind !== \'renew\' && pending.mayHaveLanded);',
    replace:
      "if (intent.kind !== 'renew') { out.push({ type: 'failed', op, why: 'refused', maybeApplied: true }); return end({ ...s, lease: null }, 'lost', out); }\n  return lose(s, out, false);",
    config: 'attack: lock, short leases',
    depth: 13,
  },
  {
    name: 'a semaphore writer claims a slot without judging it free',
    file: 'writer-step.ts',
    search: 'if (known !== undefined && !known.claimable) {',
    replace: 'if (known !== undefined && !known.claimable && known.version === null) {',
    config: 'semaphore of limit 2, three writers',
    depth: 9,
  },
  {
    name: 'a semaphore writer claims a slot without judging it free (one slot held outside)',
    file: 'writer-step.ts',
    search: 'if (known !== undefined && !known.claimable) {',
    replace: 'if (known !== undefined && !known.claimable && known.version === null) {',
    config: 'attack: semaphore of limit 2, one slot held outside',
    depth: 12,
  },
];

const chosen = ATTACK_MUTANTS.filter((m) => !values.only || values.only.split(',').includes(m.name));
for (const mutant of chosen) {
  const path = join(core, 'src/protocol', mutant.file);
  const source = readFileSync(path, 'utf8');
  const at = source.indexOf(mutant.search);
  if (at < 0 || source.indexOf(mutant.search, at + 1) >= 0) {
    console.log(`SKIP ${mutant.name}: pattern matches ${at < 0 ? 'nothing' : 'more than once'}`);
    continue;
  }
  const dir = mkdtempSync(join(tmpdir(), 'latch-attack-mutant-'));
  cpSync(join(core, 'sim-dist'), join(dir, 'sim-dist'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  if (values.world) cpSync(values.world, join(dir, 'sim-dist/sim/explore/explore-world.js'));
  const mutated = ts.transpileModule(source.replace(mutant.search, mutant.replace), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  writeFileSync(join(dir, 'sim-dist/src/protocol', mutant.file.replace(/\.ts$/, '.js')), mutated);
  const run = spawnSync(
    process.execPath,
    ['--max-old-space-size=3000', join(dir, 'sim-dist/sim/explore/cli.js'), '--config', mutant.config, '--depth', String(mutant.depth)],
    { encoding: 'utf8', timeout: 280_000 },
  );
  rmSync(dir, { recursive: true, force: true });
  const found = run.stdout.match(/VIOLATION (\S+):/)?.[1];
  console.log(`${found ? `CAUGHT (${found})` : 'SURVIVED'}  ${mutant.name}`);
  if (found) console.log(run.stdout.split('\n').filter((l) => l.startsWith('  ')).slice(0, 20).join('\n'));
}
