import type { S3Operation } from './routes.js';

/**
 * Fault injection for {@link S3Faults}. Each rule matches requests by operation, bucket and key and
 * fires on at most `times` of them. Faults act on the server side of a real HTTP exchange, so clients
 * see exactly what they would see from S3 or a broken network: an error response, a delay, or a socket
 * closed before or after the write was applied, or before a write that is applied only later.
 */

export type S3FaultKind =
  | 'latency'
  | 'slowDown'
  | 'internalError'
  | 'resetBeforeApply'
  | 'dropResponseAfterApply'
  | 'applyLate';

/** Which requests a fault applies to. Every field is optional; `{}` matches every request. */
export interface S3FaultMatcher {
  /** One operation name or several. */
  op?: S3Operation | readonly S3Operation[];
  bucket?: string;
  /**
   * Exact key or a pattern. Only requests that name a key in their URL can match a key matcher
   * (DeleteObjects and listings carry none).
   */
  key?: string | RegExp;
  /** How many matching requests the fault fires on before it retires. Default: unlimited. */
  times?: number;
}

export interface S3FaultHandle {
  readonly kind: S3FaultKind;
  /** Requests this fault has fired on so far. */
  readonly hits: number;
  /** False once removed, cleared, or used up (`times` reached). */
  readonly active: boolean;
  /** Stops the fault from firing on further requests. */
  remove(): void;
}

export interface LatencyOptions {
  /**
   * Delay the response after the request was applied instead of before applying it (the default).
   * Before: the write lands late. After: it lands on time but the client learns of it late.
   */
  afterApply?: boolean;
}

export interface ApplyLateOptions {
  /**
   * How long after the connection was cut the request is applied. Pick it longer than the client
   * takes to give up and re-read (its SDK retries and backoff included), so the re-read still
   * finds the old state.
   */
  delayMs: number;
}

/** What the server does to one request; built by {@link S3Faults.planFor}. */
export interface FaultPlan {
  delayBeforeMs: number;
  delayAfterMs: number;
  action?: Exclude<S3FaultKind, 'latency'>;
  /** With `action: 'applyLate'`: how long after cutting the connection the request is applied. */
  applyLateMs?: number;
}

export interface FaultTarget {
  op: S3Operation;
  bucket?: string;
  key?: string;
}

interface Rule {
  readonly kind: S3FaultKind;
  readonly matcher: S3FaultMatcher;
  readonly ms: number;
  readonly afterApply: boolean;
  hits: number;
  remaining: number;
  active: boolean;
}

export class S3Faults {
  private rules: Rule[] = [];

  /** Adds `ms` milliseconds to each matching request (before applying it, unless `afterApply`). */
  latency(matcher: S3FaultMatcher, ms: number, options: LatencyOptions = {}): S3FaultHandle {
    if (!Number.isFinite(ms) || ms < 0)
      throw new RangeError(`latency must be a non-negative number, got ${ms}`);
    return this.add('latency', matcher, ms, options.afterApply ?? false);
  }

  /** Answers matching requests with 503 SlowDown without applying them. */
  slowDown(matcher: S3FaultMatcher = {}): S3FaultHandle {
    return this.add('slowDown', matcher);
  }

  /** Answers matching requests with 500 InternalError without applying them. */
  internalError(matcher: S3FaultMatcher = {}): S3FaultHandle {
    return this.add('internalError', matcher);
  }

  /** Destroys the connection of matching requests without applying them: a clean failure. */
  resetBeforeApply(matcher: S3FaultMatcher = {}): S3FaultHandle {
    return this.add('resetBeforeApply', matcher);
  }

  /**
   * Applies matching requests, then destroys the connection instead of answering: the client sees a
   * network error although the write happened — the ambiguous outcome lock code has to survive.
   */
  dropResponseAfterApply(matcher: S3FaultMatcher = {}): S3FaultHandle {
    return this.add('dropResponseAfterApply', matcher);
  }

  /**
   * "Applied late, after the client gave up": reads the matching request in full, destroys the
   * connection without an answer (the client sees a network error and cannot know the outcome),
   * and only `delayMs` later applies the request to the store, against the state the store has
   * then; the answer is discarded. A re-read right after the error still shows the old state; the
   * write appears afterwards. Each SDK retry of the request is a new request the matcher may catch
   * too (use `times` to say how many).
   */
  applyLate(matcher: S3FaultMatcher, options: ApplyLateOptions): S3FaultHandle {
    const ms = options?.delayMs;
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
      throw new RangeError(`applyLate delayMs must be a non-negative number, got ${ms}`);
    return this.add('applyLate', matcher, ms);
  }

  /** Removes every fault (requests already waiting to be applied late still are). */
  clear(): void {
    for (const rule of this.rules) rule.active = false;
    this.rules = [];
  }

  /**
   * Used by the server for each request: decides which faults fire and counts them. All matching
   * latencies add up; of the other kinds the earliest added matching fault wins.
   */
  planFor(target: FaultTarget): FaultPlan {
    const plan: FaultPlan = { delayBeforeMs: 0, delayAfterMs: 0 };
    for (const rule of this.rules) {
      if (!rule.active || !matches(rule.matcher, target)) continue;
      if (rule.kind === 'latency') {
        if (rule.afterApply) plan.delayAfterMs += rule.ms;
        else plan.delayBeforeMs += rule.ms;
      } else if (plan.action === undefined) {
        plan.action = rule.kind;
        if (rule.kind === 'applyLate') plan.applyLateMs = rule.ms;
      } else {
        continue;
      }
      rule.hits++;
      rule.remaining--;
      if (rule.remaining <= 0) rule.active = false;
    }
    this.rules = this.rules.filter((r) => r.active);
    return plan;
  }

  private add(kind: S3FaultKind, matcher: S3FaultMatcher, ms = 0, afterApply = false): S3FaultHandle {
    const times = matcher.times ?? Number.POSITIVE_INFINITY;
    if (!(times > 0) || (Number.isFinite(times) && !Number.isInteger(times))) {
      throw new RangeError(`times must be a positive integer, got ${times}`);
    }
    const rule: Rule = { kind, matcher, ms, afterApply, hits: 0, remaining: times, active: true };
    this.rules.push(rule);
    return {
      kind,
      get hits() {
        return rule.hits;
      },
      get active() {
        return rule.active;
      },
      remove: () => {
        rule.active = false;
        this.rules = this.rules.filter((r) => r !== rule);
      },
    };
  }
}

function matches(matcher: S3FaultMatcher, target: FaultTarget): boolean {
  if (matcher.op !== undefined) {
    const ops: readonly S3Operation[] = typeof matcher.op === 'string' ? [matcher.op] : matcher.op;
    if (!ops.includes(target.op)) return false;
  }
  if (matcher.bucket !== undefined && matcher.bucket !== target.bucket) return false;
  if (matcher.key !== undefined) {
    if (target.key === undefined) return false;
    if (typeof matcher.key === 'string') return matcher.key === target.key;
    matcher.key.lastIndex = 0; // a /g or /y pattern would otherwise remember where it stopped
    return matcher.key.test(target.key);
  }
  return true;
}
