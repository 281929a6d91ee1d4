import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { explore } from './explore.js';
import { CONFIGS } from './explore-config.js';
import { replay, traceLabels } from './replay.js';

// `pnpm explore [--depth N] [--config SUBSTRING]`: the exhaustive check of the writer state
// machine, deeper than `pnpm test` runs it. Exits 1 on a broken invariant, printing its trace.
// `pnpm explore --config SUBSTRING --trace FILE`: follows one trace (a label per line, as
// printed) instead, for traces too deep to reach breadth-first.

const { values } = parseArgs({
  options: {
    depth: { type: 'string', default: '14' },
    config: { type: 'string' },
    trace: { type: 'string' },
    'max-states': { type: 'string', default: '5000000' },
  },
});
const chosen = CONFIGS.filter((config) => values.config === undefined || config.name.includes(values.config));
let failedAny = false;
if (values.trace !== undefined) {
  if (chosen.length !== 1) throw new Error('--trace needs --config naming exactly one configuration');
  const { steps, violation, blocked } = replay(chosen[0]!, traceLabels(readFileSync(values.trace, 'utf8')));
  if (blocked)
    console.log(
      `after ${steps} events, "${blocked.label}" cannot happen; possible: ${blocked.possible.join(' | ')}`,
    );
  console.log(
    violation ? `VIOLATION after ${steps} events: ${violation.message}` : `${steps} events, no violation`,
  );
  process.exit(violation ? 1 : 0);
}
const depth = Number(values.depth);
for (const config of chosen) {
  const started = Date.now();
  const report = explore(config, depth, Number(values['max-states']));
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const reach = report.exhausted
    ? `every reachable state (none new after depth ${report.depth})`
    : report.complete
      ? `every state to depth ${report.depth}`
      : `stopped at depth ${report.depth}`;
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
