import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { CONFIGS } from '../../sim/explore/explore-config.js';
import { replay, traceLabels } from '../../sim/explore/replay.js';

// Traces that once broke an invariant of the writer state machine, kept as regression tests:
// followed event by event, they break nothing now.

const trace = (name: string) =>
  traceLabels(readFileSync(new URL(`../../sim/explore/traces/${name}.txt`, import.meta.url), 'utf8'));

test('a hand-over after the holder shortened its lease: the waiter dates its lease by what was written', () => {
  const config = CONFIGS.find(
    (candidate) => candidate.name === 'hand-over after the holder shortened its lease',
  )!;
  const labels = trace('handover-after-shortening');
  const { steps, violation, blocked } = replay(config, labels);
  expect(violation?.message).toBeUndefined();
  // The foreign writer's second claim, which took the key from under the waiter, cannot happen
  // any more: the key is still the waiter's when it looks.
  expect(steps).toBe(14);
  expect(blocked?.label).toBe('f claim #2 applied');
});

test('an update whose answer was lost, resolved only after another client took the key: told it may have landed', () => {
  const config = CONFIGS.find((candidate) => candidate.name === 'lock, updates with faults, S3 answers')!;
  const labels = trace('update-lost-after-takeover');
  const { steps, violation, blocked } = replay(config, labels);
  expect(violation?.message).toBeUndefined();
  expect(blocked).toBeUndefined();
  expect(steps).toBe(labels.length);
});
