import { expect, test } from 'vitest';
import { explore } from '../../sim/explore/explore.js';
import { CONFIGS } from '../../sim/explore/explore-config.js';

// Every order of events, to each configuration's test depth, through the writer state machine
// (src/protocol): the store, the network's faults and the clock are modelled; the machine is
// the real one. `pnpm explore --depth N` goes deeper.

for (const config of CONFIGS) {
  test(`every event order keeps the invariants: ${config.name}`, () => {
    const report = explore(config, config.testDepth);
    const violation = report.violation;
    expect(
      violation,
      violation && `${violation.message}\n  after: ${violation.trace.join('\n    ')}`,
    ).toBeUndefined();
    expect(report.complete).toBe(true);
    // A model that stopped early (a start that never happens) would pass without checking anything.
    expect(report.depth).toBe(config.testDepth);
    expect(report.states).toBeGreaterThan(10_000);
    console.log(`${config.name}: ${report.states} states to depth ${report.depth}`);
  }, 120_000);
}
