import { parseArgs } from 'node:util';
import { explore } from './explore.js';
import { ATTACK_CONFIGS, CONFIGS } from './explore-config.js';

// `pnpm explore [--depth N] [--config SUBSTRING]`: the exhaustive check of the writer state
// machine, deeper than `pnpm test` runs it. Exits 1 on a broken invariant, printing its trace.

const { values } = parseArgs({
  options: {
    depth: { type: 'string', default: '14' },
    config: { type: 'string' },
    'max-states': { type: 'string', default: '5000000' },
  },
});
const depth = Number(values.depth);
let failedAny = false;
for (const config of [...CONFIGS, ...ATTACK_CONFIGS]) {
  if (values.config !== undefined && !config.name.includes(values.config)) continue;
  const started = Date.now();
  const report = explore(config, depth, Number(values['max-states']));
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const reach = report.complete ? `every state to depth ${report.depth}` : `stopped at depth ${report.depth}`;
  console.log(
    `${config.name}: ${report.states} states (${report.fullStates} with the key full), ${report.transitions} transitions, ${reach} (${seconds} s)`,
  );
  if (report.violation) {
    failedAny = true;
    console.log(
      `  VIOLATION ${report.violation.message}\n  after:\n    ${report.violation.trace.join('\n    ')}`,
    );
  }
}
process.exit(failedAny ? 1 : 0);
