import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ATTACK_CONFIGS, CONFIGS } from './explore-config.js';
import { checkWorld, initialWorld, successors, Violation } from './explore-world.js';

// `node sim-dist/sim/explore/replay.js --config NAME --trace FILE`: follows one trace (a label
// per line, as the explorer prints them) through the checked system, checking the invariants
// after each event. For traces too deep to reach breadth-first.

const { values } = parseArgs({ options: { config: { type: 'string' }, trace: { type: 'string' } } });
const config = [...CONFIGS, ...ATTACK_CONFIGS].find((candidate) => candidate.name.includes(values.config!));
if (!config) throw new Error(`no configuration named like ${values.config}`);
const labels = readFileSync(values.trace!, 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'));
let world = initialWorld(config);
for (const [i, label] of labels.entries()) {
  const next = successors(world, config).find((candidate) => candidate.label === label);
  if (!next) {
    const options = successors(world, config).map((candidate) => candidate.label);
    console.log(`step ${i + 1}: no event "${label}"; possible: ${options.join(' | ')}`);
    process.exit(2);
  }
  world = next.world;
  console.log(`${String(i + 1).padStart(2)} ${label}`);
  try {
    checkWorld(world, config);
  } catch (error) {
    if (!(error instanceof Violation)) throw error;
    console.log(`   VIOLATION ${error.message}`);
    process.exit(1);
  }
}
console.log('no violation');
