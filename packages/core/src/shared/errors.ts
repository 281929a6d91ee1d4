/** Where an error keeps the names of its Latch classes; shared by every copy of this package. */
const LATCH_CLASSES = Symbol.for('@latch/core:error-classes');

/**
 * Every error Latch throws is one of these classes, so callers can branch on `instanceof`
 * (or on `code`, which survives serialisation across processes).
 */
export class LockError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
    const classes: string[] = [];
    for (let c: unknown = new.target; typeof c === 'function' && c !== Error; c = Object.getPrototypeOf(c)) {
      classes.push(c.name);
    }
    Object.defineProperty(this, LATCH_CLASSES, { value: classes });
  }

  /**
   * `instanceof` also knows an error made by another copy of @latch/core in the same process,
   * such as the CommonJS build beside the ES module one, by its class names.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // `this` is the class instanceof asks about (LockError or a subclass), as in the default.
    // biome-ignore lint/complexity/noThisInStatic: the subclass asked about, not LockError
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    const classes = (value as Record<symbol, unknown> | null | undefined)?.[LATCH_CLASSES];
    // biome-ignore lint/complexity/noThisInStatic: the subclass asked about, not LockError
    return Array.isArray(classes) && classes.includes(this.name);
  }
}

/** What a timed-out waiter knew about the holder, to put in its message. */
export interface HolderSummary {
  owner: string;
  context?: string | undefined;
  acquiredAt: number;
  expiresAt: number | null;
}

/** `acquire` waited `waitMs` (or `tryAcquire` tried once) and the lock stayed held. */
export class LockTimeoutError extends LockError {
  readonly key: string;
  readonly waitedMs: number;
  readonly holder: HolderSummary | undefined;
  /** For a semaphore (limit 2 or more): its limit, all of whose slots stayed taken. Undefined for a lock. */
  readonly limit: number | undefined;

  constructor(
    key: string,
    waitedMs: number,
    holder: HolderSummary | undefined,
    options?: { cause?: unknown; limit?: number | undefined },
  ) {
    const what =
      options?.limit === undefined
        ? `lock "${key}"${describeHolder(holder)}`
        : `a slot of "${key}": all ${options.limit} stayed taken${holder ? `, one of them by ${holderName(holder)}` : ''}`;
    super(
      'LOCK_TIMEOUT',
      `Timed out after ${waitedMs} ms waiting for ${what}${options?.cause ? ` (the store kept failing: ${(options.cause as Error).message})` : ''}`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.key = key;
    this.waitedMs = waitedMs;
    this.holder = holder;
    this.limit = options?.limit;
  }
}

/**
 * Why a held lock was lost: `taken` (the record shows it freed or held by another acquisition),
 * `expired` (the lease ran out before a renewal could land), `failed` (a renewal met an error
 * that ends the lease, such as a corrupted record).
 */
export type LockLossReason = 'taken' | 'expired' | 'failed';

/** The lease was lost: stolen, expired before a renewal landed, or renewal kept failing. */
export class LockLostError extends LockError {
  readonly key: string;
  /** Why the lock was lost: for metrics and alerts, without reading the message. */
  readonly reason: LockLossReason;
  /**
   * True when the write that found the lock lost (an update, extend or release) may have been
   * stored before the loss: its answer was lost. False means it was certainly not stored.
   */
  readonly maybeApplied: boolean;

  constructor(
    key: string,
    why: string,
    options?: { cause?: unknown; maybeApplied?: boolean; reason?: LockLossReason },
  ) {
    super(
      'LOCK_LOST',
      `Lock "${key}" was lost: ${why}`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.key = key;
    this.maybeApplied = options?.maybeApplied ?? false;
    this.reason = options?.reason ?? 'taken';
  }
}

/** An operation needed this client to hold the lock, and it does not (released, or another owner's handle). */
export class LockNotHeldError extends LockError {
  readonly key: string;

  constructor(key: string, why: string) {
    super('LOCK_NOT_HELD', `Lock "${key}" is not held by this handle: ${why}`);
    this.key = key;
  }
}

/** The acquisition a handle names ended when its process passed the lock on to another caller. */
export function passedOnError(key: string): LockNotHeldError {
  return new LockNotHeldError(key, 'this acquisition ended; its process passed the lock to another caller');
}

/** Invalid options, key or data: thrown before any request is sent. */
export class LockConfigError extends LockError {
  constructor(message: string) {
    super('LOCK_CONFIG', message);
  }
}

/**
 * A key is held with one limit and a call asked for another: the processes (or routes, jobs)
 * that share the key disagree about how many may hold it. A deployment mistake, not bad input:
 * it says both values so the code that is wrong can be found.
 */
export class LockLimitMismatchError extends LockConfigError {
  /** The key whose holders use another limit. */
  readonly key: string;
  /** The limit the key's current holders use. */
  readonly heldLimit: number;
  /** The limit this call asked for. */
  readonly askedLimit: number;

  /** @internal */
  constructor(key: string, heldLimit: number, askedLimit: number, where: string) {
    super(
      `Lock "${key}" is held ${where}with limit ${heldLimit}, and this call asked for limit ${askedLimit}. Every holder of one key must use the same limit: pass { limit: ${heldLimit} } here, or change it everywhere (a key takes a new limit once no holder of the old one is left).`,
    );
    this.key = key;
    this.heldLimit = heldLimit;
    this.askedLimit = askedLimit;
  }
}

/**
 * What kind of failure a {@link LockStoreError} is: what to answer and what to log. The
 * stores set it; `retryable` and `maybeApplied` keep their own meanings.
 *
 * - `unavailable`: an outage. The store could not be reached (connection refused, DNS,
 *   timeout, connection lost) or failed on its side (5xx). Retrying later may help.
 * - `throttled`: the store asked to slow down, or concurrent conditional writes contended.
 * - `misconfigured`: the store is not what the client was set up for: the bucket or table does
 *   not exist, the client has no region or the wrong one, the endpoint cannot do conditional
 *   writes, or the store refused a request as invalid (such as a table whose key schema does
 *   not match). Retrying does not help; the configuration must change.
 * - `denied`: the client has no usable credentials (none found, an unknown access key, a bad
 *   signature, an expired token) or IAM does not allow the action. Retrying does not help.
 * - `closed`: this LockClient was closed.
 * - `unknown`: anything else, such as an error of unknown shape, or a custom store's
 *   LockStoreError that gave no reason.
 */
export type LockStoreErrorReason =
  | 'unavailable'
  | 'throttled'
  | 'misconfigured'
  | 'denied'
  | 'closed'
  | 'unknown';

/** The backend failed (missing bucket/table, access denied, repeated throttling, network). */
export class LockStoreError extends LockError {
  /** True when retrying later may succeed (throttling, network); false for missing resources or denied access. */
  readonly retryable: boolean;
  /**
   * True when a write failed in a way that leaves open whether it was applied (timeout or
   * connection lost after sending). The lease protocol resolves it by re-reading the record.
   */
  readonly maybeApplied: boolean;
  /** What kind of failure this is (see {@link LockStoreErrorReason}); `'unknown'` when the store did not say. */
  readonly reason: LockStoreErrorReason;

  constructor(
    message: string,
    options: {
      cause?: unknown;
      retryable: boolean;
      maybeApplied?: boolean;
      code?: string;
      reason?: LockStoreErrorReason;
    },
  ) {
    super(options.code ?? 'LOCK_STORE', message, { cause: options.cause });
    this.retryable = options.retryable;
    this.maybeApplied = options.maybeApplied ?? false;
    this.reason = options.reason ?? 'unknown';
  }

  /**
   * True when the store is set up wrong (`misconfigured` or `denied`): an operator must change
   * the configuration, and retrying will not help. Such errors must not look like an outage.
   */
  get isConfigurationError(): boolean {
    return this.reason === 'misconfigured' || this.reason === 'denied';
  }
}

/** A store error after which the write may or may not have been applied (and may still be). */
export function isUnknownOutcome(error: unknown): boolean {
  return error instanceof LockStoreError && error.maybeApplied;
}

/** A stored lock record could not be understood; it is never overwritten silently. */
export class LockCorruptedError extends LockError {
  readonly key: string;
  /** What is wrong with the record, in a few words. */
  readonly reason: string;
  /** The stored version of the unreadable record, when the store could tell: forceRelease replaces exactly that one. */
  readonly version: string | undefined;
  /** The highest fencing token still readable in the record, kept by forceRelease so tokens never go back. */
  readonly tokenFloor: number | undefined;

  constructor(
    key: string,
    why: string,
    options?: { cause?: unknown; version?: string | undefined; tokenFloor?: number | undefined },
  ) {
    super(
      'LOCK_CORRUPTED',
      `The stored record of lock "${key}" cannot be read (${why}). Latch will not overwrite it on its own: inspect it, then call forceRelease("${key}"), which replaces it with a free record and keeps its fencing token when that is still readable. Do not delete it by hand: fencing tokens would start again at 1.`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.key = key;
    this.reason = why;
    this.version = options?.version;
    this.tokenFloor = options?.tokenFloor;
  }

  /** The same error, naming the stored version (stores add it once they know it). */
  withVersion(version: string | undefined): LockCorruptedError {
    if (version === undefined || this.version !== undefined) return this;
    return new LockCorruptedError(this.key, this.reason, {
      cause: this.cause,
      version,
      tokenFloor: this.tokenFloor,
    });
  }
}

/** A holder as people read it in messages: "deploy #42 (host-a:123:x1y2)", or just the owner. */
export function holderName(holder: Pick<HolderSummary, 'owner' | 'context'>): string {
  return holder.context ? `${holder.context} (${holder.owner})` : holder.owner;
}

function describeHolder(holder: HolderSummary | undefined): string {
  if (!holder) return '';
  const who = holderName(holder);
  const since = new Date(holder.acquiredAt).toISOString().slice(11, 19);
  const until =
    holder.expiresAt === null ? 'no expiry' : `lease ends ${new Date(holder.expiresAt).toISOString()}`;
  return `: held by ${who} since ${since} UTC, ${until}`;
}
