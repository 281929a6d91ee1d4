import { phaseOf, type WriterPhase } from '../../src/protocol/writer-phase.js';
import type { ExploreConfig } from './explore-config.js';
import { believersOf, checkWorld, initialWorld, successors, Violation, type World } from './explore-world.js';

export interface ExploreReport {
  readonly config: string;
  /** Distinct states reached (each explored once). */
  readonly states: number;
  /** Transitions taken, duplicates included. */
  readonly transitions: number;
  /** The deepest level explored completely. */
  readonly depth: number;
  /** Whether every state within the depth was explored (false: it stopped at `maxStates`). */
  readonly complete: boolean;
  /** Whether no new state was left to find: every state the configuration can reach was checked. */
  readonly exhausted: boolean;
  /**
   * States in which as many callers believe they hold as the limit allows: none would mean the
   * exclusion check never had anything to check (a model that never grants).
   */
  readonly fullStates: number;
  /** The phases some writer was in, in some state reached. */
  readonly phases: readonly WriterPhase[];
  /** The first broken invariant, with the events that lead to it. */
  readonly violation?: {
    readonly check: string;
    readonly message: string;
    readonly trace: readonly string[];
  };
}

interface Node {
  readonly world: World;
  readonly parent: Node | undefined;
  readonly label: string;
}

function traceOf(node: Node | undefined, last: string): string[] {
  const labels = [last];
  for (let at = node; at?.parent !== undefined; at = at.parent) labels.push(at.label);
  return labels.reverse();
}

/**
 * Breadth-first over every order of events, to `depth` events, each state explored once (its
 * JSON is its hash). Checks the invariants in every state reached; stops at the first violation.
 */
export function explore(config: ExploreConfig, depth: number, maxStates = 5_000_000): ExploreReport {
  const start = initialWorld(config);
  const seen = new Set<string>([JSON.stringify(start)]);
  let level: Node[] = [{ world: start, parent: undefined, label: 'start' }];
  let transitions = 0;
  let fullStates = 0;
  const phases = new Set<WriterPhase>();
  const report = (depthReached: number, complete: boolean, exhausted = false) => ({
    config: config.name,
    states: seen.size,
    transitions,
    depth: depthReached,
    complete,
    exhausted,
    fullStates,
    phases: [...phases],
  });
  for (let d = 0; d < depth; d++) {
    const nextLevel: Node[] = [];
    for (const node of level) {
      let next: ReturnType<typeof successors>;
      try {
        next = successors(node.world, config);
      } catch (error) {
        return failed(report(d, false), config, error, node, '(an event of this state)');
      }
      for (const { label, world } of next) {
        transitions++;
        const key = JSON.stringify(world);
        if (seen.has(key)) continue;
        seen.add(key);
        const child = { world, parent: node, label };
        try {
          checkWorld(world, config);
        } catch (error) {
          return failed(report(d + 1, false), config, error, node, label);
        }
        // Outside holders (a slot held by a client the configuration does not model) count too.
        const outside = (world.record?.holders ?? []).filter(
          (holder) =>
            !world.writers.some((writer) => writer.writer === holder.writer) &&
            (holder.expiresAt === null || world.now < holder.expiresAt),
        );
        if (believersOf(world).length + outside.length === config.limit) fullStates++;
        for (const writer of world.writers) phases.add(phaseOf(writer));
        nextLevel.push(child);
        if (seen.size >= maxStates) {
          return report(d, false);
        }
      }
    }
    if (nextLevel.length === 0) return report(d, true, true);
    level = nextLevel;
  }
  return report(depth, true);
}

function failed(
  report: ExploreReport,
  config: ExploreConfig,
  error: unknown,
  node: Node,
  label: string,
): ExploreReport {
  if (!(error instanceof Violation)) {
    const trace = traceOf(node, label).join('\n  ');
    throw new Error(`${config.name}: ${(error as Error).message}\n  ${trace}`, { cause: error });
  }
  return {
    ...report,
    violation: { check: error.check, message: error.message, trace: traceOf(node, label) },
  };
}
