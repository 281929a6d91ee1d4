import type { ResourceWrite } from './protected-resource.js';

/** One acquisition's critical section as the resource saw it: its begin and, if sent, its commit. */
export interface Section {
  key: string;
  token: number;
  process: string;
  worker: string;
  unit: string;
  begin: ResourceWrite;
  commit?: ResourceWrite;
}

export interface UnitExpectations {
  /** Units whose worker survived: each must have landed exactly once. */
  mustBeDone: readonly string[];
  /** Units the workers reported done: each must have landed exactly once too. */
  reportedDone: readonly string[];
}

export interface CheckResult {
  /** Acquisitions that reached the resource (distinct key + fencing token). */
  acquisitions: number;
  /** Pairs of accepted critical sections of one key that overlap in time. Must be empty. */
  overlaps: string[];
  /** Pairs of sections of one key that overlapped in time, counting rejected writes too: what would have happened without fencing. */
  unfencedOverlaps: number;
  /** Writes the resource refused because a higher token had been seen. */
  staleWritesRejected: number;
  /** A key + token pair used by two workers: the lock was handed out twice. Must be empty. */
  sharedTokens: string[];
  /** Keys whose accepted commits did not carry strictly increasing tokens. Must be empty. */
  tokenOrderViolations: string[];
  /** Units that should have landed and did not. Must be empty. */
  lostUnits: string[];
  /** Units that landed more than once. Must be empty. */
  doubledUnits: string[];
}

/**
 * Replays the resource's history and checks the promise "never held twice, nothing lost":
 * accepted sections of a key never overlap, tokens per key only go up and are never shared,
 * and every unit of work landed exactly once.
 */
export function checkHistory(writes: readonly ResourceWrite[], units: UnitExpectations): CheckResult {
  const sections = sectionsOf(writes);
  const byKey = groupBy(sections, (s) => s.key);

  const overlaps: string[] = [];
  let unfencedOverlaps = 0;
  const sharedTokens: string[] = [];
  const tokenOrderViolations: string[] = [];
  for (const [key, keySections] of byKey) {
    const accepted = keySections.filter((s) => s.begin.accepted && s.commit?.accepted);
    for (const [a, b] of overlappingPairs(accepted)) {
      overlaps.push(`${key}: ${describeSection(a)} overlaps ${describeSection(b)}`);
    }
    unfencedOverlaps += overlappingPairs(keySections).length;

    for (const [token, holders] of groupBy(keySections, (s) => s.token)) {
      const workers = new Set(holders.map((s) => s.worker));
      if (workers.size > 1) sharedTokens.push(`${key} token ${token} used by ${[...workers].join(', ')}`);
    }

    const committed = accepted.map((s) => s.commit!).sort((a, b) => a.seq - b.seq);
    for (let i = 1; i < committed.length; i++) {
      if (committed[i]!.token <= committed[i - 1]!.token) {
        tokenOrderViolations.push(
          `${key}: token ${committed[i]!.token} accepted after ${committed[i - 1]!.token}`,
        );
      }
    }
  }

  const landed = new Map<string, number>();
  for (const w of writes) {
    if (w.kind === 'commit' && w.accepted) landed.set(w.unit, (landed.get(w.unit) ?? 0) + 1);
  }
  const expected = new Set([...units.mustBeDone, ...units.reportedDone]);
  return {
    acquisitions: new Set(sections.map((s) => `${s.key}\u0000${s.token}`)).size,
    overlaps,
    unfencedOverlaps,
    staleWritesRejected: writes.filter((w) => !w.accepted).length,
    sharedTokens,
    tokenOrderViolations,
    lostUnits: [...expected].filter((unit) => !landed.has(unit)),
    doubledUnits: [...landed].filter(([, count]) => count > 1).map(([unit]) => unit),
  };
}

/** Pairs each begin with the commit of the same acquisition (same key, token, worker and unit). */
export function sectionsOf(writes: readonly ResourceWrite[]): Section[] {
  const open = new Map<string, Section>();
  const sections: Section[] = [];
  const id = (w: ResourceWrite) => JSON.stringify([w.key, w.token, w.worker, w.unit]);
  for (const w of [...writes].sort((a, b) => a.seq - b.seq)) {
    if (w.kind === 'begin') {
      const section: Section = {
        key: w.key,
        token: w.token,
        process: w.process,
        worker: w.worker,
        unit: w.unit,
        begin: w,
      };
      open.set(id(w), section);
      sections.push(section);
    } else {
      const section = open.get(id(w));
      if (section) {
        section.commit = w;
        open.delete(id(w));
      }
    }
  }
  return sections;
}

/** Sections whose [begin, end] spans (in arrival order) intersect; a section without commit spans its begin only. */
function overlappingPairs(sections: readonly Section[]): Array<[Section, Section]> {
  const end = (s: Section) => s.commit?.seq ?? s.begin.seq;
  const sorted = [...sections].sort((a, b) => a.begin.seq - b.begin.seq);
  const pairs: Array<[Section, Section]> = [];
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length && sorted[j]!.begin.seq < end(sorted[i]!); j++) {
      pairs.push([sorted[i]!, sorted[j]!]);
    }
  }
  return pairs;
}

function describeSection(s: Section): string {
  return `${s.worker}/${s.unit} (token ${s.token})`;
}

function groupBy<T, K>(items: readonly T[], keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = keyOf(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
