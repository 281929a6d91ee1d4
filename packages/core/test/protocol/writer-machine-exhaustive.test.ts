import { expect, test } from 'vitest';
import { explore } from '../../sim/explore/explore.js';
import { CONFIGS } from '../../sim/explore/explore-config.js';
import { PHASES, type WriterPhase } from '../../src/protocol/writer-phase.js';

// Every order of events, to each configuration's test depth, through the writer state machine
// (src/protocol): the store, the network's faults and the clock are modelled; the machine is
// the real one. `pnpm explore --depth N` goes deeper.

const reached = new Set<WriterPhase>();

for (const config of CONFIGS) {
  test(`every event order keeps the invariants: ${config.name}`, () => {
    const report = explore(config, config.testDepth === 'all' ? 1_000 : config.testDepth);
    const violation = report.violation;
    expect(
      violation,
      violation && `${violation.message}\n  after: ${violation.trace.join('\n    ')}`,
    ).toBeUndefined();
    expect(report.complete).toBe(true);
    if (config.testDepth === 'all') expect(report.exhausted).toBe(true);
    // A model that stops early, or never grants the key, would pass without checking anything.
    expect(report.states).toBeGreaterThan(5_000);
    expect(report.fullStates).toBeGreaterThan(0);
    for (const phase of report.phases) reached.add(phase);
    console.log(
      `${config.name}: ${report.states} states ${report.exhausted ? '(all reachable)' : `to depth ${report.depth}`}, ${report.fullStates} with the key full`,
    );
  }, 120_000);
}

test('every phase of the machine is reached by some configuration', () => {
  // Runs after the tests above (in order, in one file): none of the phases is left unchecked.
  expect(PHASES.filter((phase) => !reached.has(phase))).toEqual([]);
});
