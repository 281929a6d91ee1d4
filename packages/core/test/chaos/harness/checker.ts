import type { ResourceWrite } from './protected-resource.js';

/** One acquisition's critical section as the resource saw it: its begin, its steps and, if sent, its commit. */
export interface Section {
  key: string;
  token: number;
  process: string;
  worker: string;
  unit: string;
  begin: ResourceWrite;
  commit?: ResourceWrite;
  /** Every write of the section (begin, steps, commit), in arrival order. */
  writes: ResourceWrite[];
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
  /**
   * Pairs of sections of one key that overlapped in time while both holders believed they held
   * the lock: each section spans the checks (`isHeld` and a live signal) its writes were sent
   * after, accepted by the resource or not. Fencing plays no part, so a lock granted twice shows
   * here even when the resource refused the late writes. Must be empty whenever the clock model
   * promises exclusivity.
   */
  unfencedOverlaps: string[];
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
 * no two holders of a key believed they held it at the same time, accepted sections of a key
 * never overlap, tokens per key only go up and are never shared, and every unit of work landed
 * exactly once.
 */
export function checkHistory(writes: readonly ResourceWrite[], units: UnitExpectations): CheckResult {
  const sections = sectionsOf(writes);
  const byKey = groupBy(sections, (s) => s.key);

  const overlaps: string[] = [];
  const unfencedOverlaps: string[] = [];
  const sharedTokens: string[] = [];
  const tokenOrderViolations: string[] = [];
  for (const [key, keySections] of byKey) {
    const accepted = keySections.filter((s) => s.begin.accepted && s.commit?.accepted);
    for (const [a, b] of overlappingPairs(accepted)) {
      overlaps.push(`${key}: ${describeSection(a)} overlaps ${describeSection(b)}`);
    }
    for (const [a, b] of believedOverlaps(keySections)) {
      unfencedOverlaps.push(
        `${key}: ${describeSection(a)} believed it held the lock ${describeSpan(a)}, ${describeSection(b)} ${describeSpan(b)}`,
      );
    }

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

/** Groups the writes of each acquisition (same key, token, worker and unit) under its begin. */
export function sectionsOf(writes: readonly ResourceWrite[]): Section[] {
  const byId = new Map<string, Section>();
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
        writes: [w],
      };
      byId.set(id(w), section);
      sections.push(section);
      continue;
    }
    const section = byId.get(id(w));
    if (!section) continue;
    section.writes.push(w);
    if (w.kind === 'commit') section.commit ??= w;
  }
  return sections;
}

/** When a section's holder believed it held the lock: from its first passed check to its last. */
function believedSpan(section: Section): { from: number; to: number } | undefined {
  const checks = section.writes.flatMap((w) => (w.checkedAt === undefined ? [] : [w.checkedAt]));
  return checks.length ? { from: Math.min(...checks), to: Math.max(...checks) } : undefined;
}

/**
 * Pairs of sections whose believed spans intersect (a span of one check is an instant, and
 * counts when it falls strictly inside another span).
 */
function believedOverlaps(sections: readonly Section[]): Array<[Section, Section]> {
  const spans = sections.flatMap((section) => {
    const span = believedSpan(section);
    return span ? [{ section, ...span }] : [];
  });
  spans.sort((a, b) => a.from - b.from);
  const pairs: Array<[Section, Section]> = [];
  for (let i = 0; i < spans.length; i++) {
    for (let j = i + 1; j < spans.length && spans[j]!.from < spans[i]!.to; j++) {
      pairs.push([spans[i]!.section, spans[j]!.section]);
    }
  }
  return pairs;
}

function describeSpan(section: Section): string {
  const span = believedSpan(section);
  const ms = (n: number) => `${(n % 100_000).toFixed(1)}`;
  return span ? `from …${ms(span.from)} to …${ms(span.to)} ms` : '';
}

/** Accepted sections whose [begin, commit] spans (in arrival order) intersect; a section without commit spans its begin only. */
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
