import { expect } from 'vitest';
import type { ConformanceBackend, Limitations } from './backend.js';
import type { ClientOptionsLike, LatchModule, LockClientLike } from './latch-module.js';

/** What the lock suite's cases share; the backend exists once `start()` has run. */
export interface LockRun<Store> {
  readonly latch: LatchModule<Store>;
  readonly limits: Limitations;
  /** Rounds per contender in the mutual-exclusion case. */
  readonly rounds: number;
  /** How many locks fill more than one page of the store's listing; no paging case without it. */
  readonly listPagingLocks: number | undefined;
  backend(): ConformanceBackend<Store>;
  /** A new LockClient on the backend's store, polling fast. */
  client(options?: Partial<ClientOptionsLike<Store>>): LockClientLike;
  /** A case title, naming the limitation that changes what it checks. */
  title(text: string, limitation?: string): string;
  /** The next acquisition's token: exactly +1, or just higher where tokens are not consecutive. */
  expectNextToken(next: number | undefined, previous: number): void;
}

let counter = 0;
/** A key no other test uses, so tests can share one backend. */
export function uniqueKey(label: string): string {
  counter += 1;
  return `conformance/${label}/${process.pid}-${Date.now().toString(36)}-${counter}`;
}

export const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A clock `offsetMs` ahead of (or behind) the wall clock. */
export const skewed = (offsetMs: number) => ({
  now: () => Date.now() + offsetMs,
  monotonic: () => performance.now(),
});

export function untilAborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener('abort', () => resolve(signal.reason), { once: true });
  });
}

export async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await delay(20);
  }
}

/** Timers as a client's `clock.time` sets them, and the switch that freezes them. */
export interface FreezableTime {
  readonly time: {
    now(): number;
    monotonic(): number;
    setTimer(callback: () => void, ms: number, options?: { keepAlive?: boolean }): { cancel(): void };
  };
  /** From now on no timer of the client fires: it renews, retries and learns nothing, as a frozen process. */
  freeze(): void;
  /** Timers fire again; those due while frozen fire now, as a process that woke up. */
  thaw(): void;
}

/** System clocks whose timers can be frozen: a client cut off from time (typed through the public `clock.time`). */
export function freezableTime(): FreezableTime {
  let held: Array<() => void> | undefined;
  return {
    time: {
      now: () => Date.now(),
      monotonic: () => performance.now(),
      setTimer(callback, ms, options) {
        const fire = () => (held ? held.push(callback) : callback());
        const timer = setTimeout(fire, ms);
        if (!options?.keepAlive) timer.unref();
        return { cancel: () => clearTimeout(timer) };
      },
    },
    freeze() {
      held ??= [];
    },
    thaw() {
      const due = held ?? [];
      held = undefined;
      for (const callback of due) callback();
    },
  };
}

export function lockRun<Store>(
  latch: LatchModule<Store>,
  backend: () => ConformanceBackend<Store>,
  limits: Limitations,
  rounds: number,
  listPagingLocks?: number,
): LockRun<Store> {
  return {
    latch,
    limits,
    rounds,
    listPagingLocks,
    backend,
    client: (options = {}) => new latch.LockClient({ store: backend().store(), pollMs: 50, ...options }),
    title: (text, limitation) => (limitation ? `${text} [limited: ${limitation}]` : text),
    expectNextToken(next, previous) {
      if (limits.consecutiveTokens) expect(next).toBeGreaterThan(previous);
      else expect(next).toBe(previous + 1);
    },
  };
}
