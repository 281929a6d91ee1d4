import type { ExploreConfig } from './explore-config.js';
import { checkWorld, initialWorld, successors, Violation } from './explore-world.js';

export interface Replayed {
  /** Events that happened. */
  readonly steps: number;
  readonly violation?: Violation;
  /** The trace's next event, when it can no longer happen at that step (the machine now acts otherwise). */
  readonly blocked?: { readonly label: string; readonly possible: readonly string[] };
}

/**
 * Follows one trace (the event labels the explorer prints) through the checked system, checking
 * the invariants after each event: for traces too deep to reach breadth-first, and to keep a
 * trace that once broke an invariant as a regression test.
 */
export function replay(config: ExploreConfig, labels: readonly string[]): Replayed {
  let world = initialWorld(config);
  for (const [i, label] of labels.entries()) {
    let options: ReturnType<typeof successors>;
    try {
      options = successors(world, config);
    } catch (error) {
      // Broken while the next events were tried (a data check as a write lands or is answered).
      if (error instanceof Violation) return { steps: i, violation: error };
      throw error;
    }
    const next = options.find((candidate) => candidate.label === label);
    if (!next) return { steps: i, blocked: { label, possible: options.map((candidate) => candidate.label) } };
    world = next.world;
    try {
      checkWorld(world, config);
    } catch (error) {
      if (error instanceof Violation) return { steps: i + 1, violation: error };
      throw error;
    }
  }
  return { steps: labels.length };
}

/** A trace file's labels: one per line; blank lines and `#` comments are skipped. */
export function traceLabels(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
}
