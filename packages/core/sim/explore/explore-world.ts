import { isReleaseWrite } from '../../src/protocol/write-outcome.js';
import type { TimerName, WriterAction, WriterEvent } from '../../src/protocol/writer-events.js';
import {
  effectiveDeadline,
  newWriter,
  nothingRenews,
  type WriterState,
} from '../../src/protocol/writer-state.js';
import { step } from '../../src/protocol/writer-step.js';
import type { ExploreConfig } from './explore-config.js';
import {
  applyWrite,
  forceFree,
  isClaimable,
  type ModelRecord,
  type ModelWrite,
  viewOf,
} from './model-store.js';

// One state of the checked system (writers, the record, messages on the network, time) and every
// event that can happen next. Plain data, so that a state hashes to its JSON.

export type Message =
  | { readonly kind: 'write'; readonly w: number; readonly write: ModelWrite; readonly timedOut: boolean }
  | { readonly kind: 'read'; readonly w: number; readonly for: number }
  /** `looked`: a read served after a forceRelease freed the writer's entry (it shows the writer so). */
  | { readonly kind: 'answer'; readonly w: number; readonly event: WriterEvent; readonly looked?: true };

export interface World {
  readonly now: number;
  readonly record: ModelRecord | null;
  readonly writers: readonly WriterState[];
  readonly started: readonly boolean[];
  readonly timers: readonly Partial<Record<TimerName, number>>[];
  readonly net: readonly Message[];
  readonly faults: number;
  readonly userActions: readonly number[];
  readonly forceReleases: number;
  /** How many forceReleases writers' own clients made. */
  readonly ownForceReleases: number;
  /** How many suspends there were, and per writer how far its monotonic clock runs behind the world's. */
  readonly suspends: number;
  readonly lag: readonly number[];
  /** The highest token a caller was given, and every one given. */
  readonly granted: number;
  readonly tokens: readonly number[];
  /** Writers whose entry an operator's forceRelease freed: they may believe they hold until they look. */
  readonly forced: readonly string[];
  /** Data that landed, as `writer=data`. */
  readonly stored: readonly string[];
  /** Per writer: whether its caller was told it holds (acquired, or a refused release/hand-over) and not told since that it does not. */
  readonly told: readonly boolean[];
  /** Data whose caller got its answer (released, or failed): `writer=data`. None may land after. */
  readonly settled: readonly string[];
  /** Per writer: the data its caller's release or hand-over under way stores (null: none), as the caller asked. */
  readonly asking: readonly (string | null)[];
  /** Per writer: its caller waits for the answer to its first call of release (or hand-over). */
  readonly awaiting: readonly boolean[];
  /** Per writer: the data its caller's update under way stores (null: none, or an extend). */
  readonly changing: readonly (string | null)[];
  /** How many times the record was deleted from outside (an S3 lifecycle rule, a DynamoDB TTL, a person). */
  readonly deletes: number;
  /** Per writer: the highest token it has seen in a record (a read, a refusal's view, a write's answer). */
  readonly seen: readonly number[];
  /** The version of the record last deleted (versions never repeat). */
  readonly versionFloor: number;
}

/** A broken invariant, named by the check it breaks. */
export class Violation extends Error {
  constructor(
    readonly check: string,
    message: string,
  ) {
    super(`${check}: ${message}`);
  }
}

export function initialWorld(config: ExploreConfig): World {
  return {
    now: 0,
    record: config.initialRecord ?? null,
    // A semaphore's writers are slots, as the driver makes them: they never pass on locally.
    writers: config.writers.map((writer) =>
      newWriter(writer.id, config.limit > 1 ? { ...writer.terms, slot: true } : writer.terms),
    ),
    started: config.writers.map(() => false),
    timers: config.writers.map(() => ({})),
    net: [],
    faults: 0,
    userActions: config.writers.map(() => 0),
    forceReleases: 0,
    ownForceReleases: 0,
    suspends: 0,
    lag: config.writers.map(() => 0),
    granted: 0,
    tokens: [],
    forced: [],
    stored: [],
    told: config.writers.map(() => false),
    settled: [],
    asking: config.writers.map(() => null),
    awaiting: config.writers.map(() => false),
    changing: config.writers.map(() => null),
    deletes: 0,
    seen: config.writers.map(() => 0),
    versionFloor: 0,
  };
}

/** Mutable while one transition is applied. */
interface Draft {
  now: number;
  record: ModelRecord | null;
  writers: WriterState[];
  started: boolean[];
  timers: Partial<Record<TimerName, number>>[];
  net: Message[];
  faults: number;
  userActions: number[];
  forceReleases: number;
  ownForceReleases: number;
  suspends: number;
  lag: number[];
  granted: number;
  tokens: number[];
  forced: string[];
  stored: string[];
  told: boolean[];
  settled: string[];
  asking: (string | null)[];
  awaiting: boolean[];
  changing: (string | null)[];
  deletes: number;
  seen: number[];
  versionFloor: number;
}

function draftOf(world: World): Draft {
  return {
    ...world,
    writers: [...world.writers],
    started: [...world.started],
    timers: world.timers.map((timers) => ({ ...timers })),
    net: [...world.net],
    userActions: [...world.userActions],
    tokens: [...world.tokens],
    forced: [...world.forced],
    stored: [...world.stored],
    told: [...world.told],
    settled: [...world.settled],
    asking: [...world.asking],
    awaiting: [...world.awaiting],
    changing: [...world.changing],
    seen: [...world.seen],
    lag: [...world.lag],
  };
}

/** Feeds `event` to writer `w`, stamped with its own clock, and performs what it asks for. */
function deliver(draft: Draft, config: ExploreConfig, w: number, stamped: WriterEvent): void {
  const event = { ...stamped, now: draft.now - draft.lag[w]! } as WriterEvent;
  const before = draft.writers[w]!;
  const view =
    event.type === 'read'
      ? event.view
      : event.type === 'written' && event.answer.kind === 'conflict'
        ? event.answer.view
        : undefined;
  const { state, actions } = step(before, event);
  draft.writers[w] = state;
  // A store that refuses (an outage, throttling) is met by waiting, never by claiming (or giving
  // back) again at once. (A caller's own call, sent next, is its caller's pace.)
  if (event.type === 'written' && event.answer.kind === 'refused') {
    const refusedClaim = before.pending?.intent.kind === 'claim';
    const again = actions.some(
      (action) =>
        action.type === 'write' &&
        ((refusedClaim && action.intent.kind === 'claim') || state.goal.kind === 'giveBack'),
    );
    if (again) throw new Violation('tight-loop', `${before.writer} sends again at once after a refusal`);
  }
  for (const action of actions) perform(draft, config, w, before, action);
  // (A record with this writer's own entry holds its token and the tokens reserved for it: its
  // own to give again.)
  if (view && view.own === undefined) draft.seen[w] = Math.max(draft.seen[w]!, view.token);
}

function perform(draft: Draft, config: ExploreConfig, w: number, before: WriterState, action: WriterAction) {
  const writer = draft.writers[w]!;
  switch (action.type) {
    case 'read':
      draft.net.push({ kind: 'read', w, for: action.for });
      return;
    case 'write': {
      const { intent } = action;
      // A renewal stores the token of the caller that holds now (a local pass gave it a later
      // one); a write sent again is the same write.
      const holding = writer.lease?.token ?? writer.known?.own?.token;
      const again = before.pending?.seq === action.seq;
      if (intent.kind === 'renew' && !again && intent.token !== holding) {
        throw new Violation(
          'holder-token',
          `${writer.writer} renews with token ${intent.token}, its caller holds ${holding}`,
        );
      }
      const leaseMs =
        intent.kind === 'renew' || intent.kind === 'handOver' ? intent.leaseMs : writer.terms.leaseMs;
      const write = {
        writer: writer.writer,
        acquisition: acquisitionOf(config, w),
        seq: action.seq,
        intent,
        condition: action.condition,
        leaseMs,
      };
      draft.net.push({ kind: 'write', w, write, timedOut: false });
      return;
    }
    case 'arm':
      draft.timers[w]![action.timer] = action.at;
      return;
    case 'acquired':
    case 'passed': {
      // A pass: the caller left and the next caller of the same client holds, on a later token.
      draft.told[w] = true;
      const resumed = config.writers[w]!.resumes;
      if (resumed !== undefined) {
        // A resume goes on with the acquisition's own token, and its old process's caller no
        // longer counts as a holder: whoever resumes a handle takes that on (as with forceRelease).
        if (!draft.forced.includes(resumed)) draft.forced.push(resumed);
        return;
      }
      // Fencing goes on from what this writer saw, even across a deletion of the record.
      if (config.limit === 1 && action.token <= draft.seen[w]!) {
        throw new Violation(
          'token-order',
          `${writer.writer} got token ${action.token}, but had seen ${draft.seen[w]}`,
        );
      }
      draft.seen[w] = Math.max(draft.seen[w]!, action.token);
      // A lock's callers get rising tokens; a semaphore's get distinct ones (its slots' answers
      // may arrive in any order).
      // An operator's forceRelease took the key from under a writer: what it then gets is on the operator.
      if (draft.forced.includes(writer.writer)) return;
      // Across a deletion no client can go on from tokens it never saw: checked per writer below.
      if (draft.deletes > 0) {
        /* per writer only */
      } else if (config.limit === 1 ? action.token <= draft.granted : draft.tokens.includes(action.token)) {
        throw new Violation(
          'token-order',
          `${writer.writer} got token ${action.token} after ${config.limit === 1 ? draft.granted : action.token} was given`,
        );
      }
      draft.granted = Math.max(draft.granted, action.token);
      draft.tokens.push(action.token);
      return;
    }
    case 'released': {
      const data = answered(draft.asking, w);
      draft.awaiting[w] = false;
      draft.told[w] = false;
      if (data !== undefined) draft.settled.push(`${writer.writer}=${data}`);
      if (data !== undefined && !draft.stored.includes(`${writer.writer}=${data}`)) {
        throw new Violation(
          'data',
          `${writer.writer}'s release of "${data}" resolved, but that data never landed`,
        );
      }
      return;
    }
    case 'passTo': {
      const to = config.writers.findIndex((candidate) => candidate.id === action.to);
      const { version, token, top, sentAt, leaseMs } = action;
      deliver(draft, config, to, {
        type: 'handedOver',
        version,
        token,
        top,
        leaseMs,
        sentAt,
        now: draft.now,
      });
      return;
    }
    case 'failed': {
      const goal = before.goal;
      if (action.op !== 'extend') draft.awaiting[w] = false;
      if (action.why === 'unknown') {
        // Told its release may have landed: it no longer counts on holding, and its data may
        // still land (the writer goes on resolving it, and says so once it knows).
        draft.told[w] = false;
        return;
      }
      const data = answered(action.op === 'extend' ? draft.changing : draft.asking, w);
      // Refused: the caller holds as before (a refused extend); lost: it does not.
      draft.told[w] =
        action.why === 'refused' &&
        (action.op === 'extend' ? draft.told[w]! : goal.kind === 'release' || goal.kind === 'handOver');
      // Told it may have landed: it may still land (a change whose write was in flight at the loss).
      if (data !== undefined && !action.maybeApplied) draft.settled.push(`${writer.writer}=${data}`);
      if (!action.maybeApplied && data !== undefined && draft.stored.includes(`${writer.writer}=${data}`)) {
        throw new Violation(
          'data',
          `${writer.writer} was told its ${action.op} of "${data}" failed, but that data landed`,
        );
      }
      return;
    }
    case 'lost':
      draft.told[w] = false;
      return;
    case 'extended': {
      const data = answered(draft.changing, w);
      if (data === undefined) return;
      draft.settled.push(`${writer.writer}=${data}`);
      if (!draft.stored.includes(`${writer.writer}=${data}`)) {
        throw new Violation(
          'data',
          `${writer.writer}'s update of "${data}" resolved, but that data never landed`,
        );
      }
      return;
    }
    case 'notPassed':
    case 'renewed':
    case 'ended':
      return;
  }
}

/** The data of the caller's request the machine just answered (from `slots`), no longer under way. */
function answered(slots: (string | null)[], w: number): string | undefined {
  const data = slots[w] ?? undefined;
  slots[w] = null;
  return data;
}

/** The acquisition writer `w` writes for: its own, or the one it resumes. */
function acquisitionOf(config: ExploreConfig, w: number): string {
  const writer = config.writers[w]!;
  return writer.resumes ?? writer.id;
}

function freeze(draft: Draft): World {
  draft.net.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  return draft;
}

/** Every world one event after `world`, each with a short label of the event. */
export function successors(world: World, config: ExploreConfig): { label: string; world: World }[] {
  const next: { label: string; world: World }[] = [];
  const add = (label: string, change: (draft: Draft) => void) => {
    const draft = draftOf(world);
    change(draft);
    next.push({ label, world: freeze(draft) });
  };
  const canFault = world.faults < config.faults;
  world.writers.forEach((writer, w) => {
    const id = writer.writer;
    const { local, resumes } = config.writers[w]!;
    if (!world.started[w] && !local && resumes === undefined && writer.end === null) {
      add(`${id} starts`, (d) => {
        d.started[w] = true;
        deliver(d, config, w, { type: 'start', now: d.now });
      });
    }
    for (const [timer, at] of Object.entries(world.timers[w]!) as [TimerName, number][]) {
      // Timers go by the writer's own clock.
      if (at > world.now - world.lag[w]!) continue;
      add(`${id} ${timer} timer`, (d) => {
        delete d.timers[w]![timer];
        deliver(d, config, w, { type: 'timer', timer, now: d.now });
      });
    }
    if (world.userActions[w]! < config.userActions && writer.end === null) userCalls(world, config, w, add);
    if (!world.started[w] || writer.end !== null) return;
    const { suspends } = config;
    if (suspends && world.suspends < suspends.times) {
      // The process stops; the world goes on; its monotonic clock misses the time, and its driver
      // (which also reads the wall clock) tells the writer before anything else.
      add(`${id}'s process is suspended for ${suspends.ticks}`, (d) => {
        d.now += suspends.ticks;
        d.lag[w]! += suspends.ticks;
        d.suspends++;
        deliver(d, config, w, { type: 'suspended', ms: suspends.ticks, now: 0 });
      });
    }
    if (world.ownForceReleases < (config.ownForceReleases ?? 0) && (world.record?.holders.length ?? 0) > 0) {
      add(`${id}'s own client force-releases the key`, (d) => {
        // For every other writer it is another client's operator: they may believe until they look.
        for (const holder of d.record!.holders) {
          config.writers.forEach((_, other) => {
            if (other !== w && acquisitionOf(config, other) === holder.writer)
              d.forced.push(config.writers[other]!.id);
          });
        }
        d.record = forceFree(d.record!);
        d.ownForceReleases++;
        deliver(d, config, w, { type: 'forceReleased', now: 0 });
      });
    }
  });
  world.net.forEach((message) => {
    const take = (d: Draft) => d.net.splice(d.net.indexOf(message), 1);
    const w = message.w;
    const id = world.writers[w]!.writer;
    if (message.kind === 'answer') {
      add(`${id} gets ${message.event.type}`, (d) => {
        take(d);
        deliver(d, config, w, { ...message.event, now: d.now } as WriterEvent);
        // It has looked since the force: from now on it counts as a holder if it still believes it is one.
        if (message.looked) d.forced = d.forced.filter((writer) => writer !== id);
      });
      return;
    }
    if (message.kind === 'read') {
      add(`${id} read ${message.for} served`, (d) => {
        take(d);
        const view = viewOf(d.record, id, acquisitionOf(config, w), d.now, config.limit);
        const event: WriterEvent = { type: 'read', for: message.for, view, now: 0 };
        d.net.push(
          d.forced.includes(id) ? { kind: 'answer', w, event, looked: true } : { kind: 'answer', w, event },
        );
      });
      if (canFault) {
        add(`${id} read ${message.for} fails`, (d) => {
          take(d);
          d.faults++;
          deliver(d, config, w, { type: 'readFailed', for: message.for, now: d.now });
        });
      }
      return;
    }
    const { write } = message;
    const label = `${id} ${write.intent.kind} #${write.seq}`;
    const applied = (d: Draft, answered: boolean) => {
      take(d);
      const answer = applyWrite(d.record, write, d.now, config.limit, d.versionFloor);
      if (answer.ok) {
        d.record = answer.record;
        const { intent } = write;
        if (intent.kind !== 'claim' && intent.data !== undefined) {
          const stored = `${id}=${intent.data}`;
          if (d.settled.includes(stored)) {
            throw new Violation('data', `${id}'s "${intent.data}" landed after its caller got its answer`);
          }
          if (d.stored.includes(stored)) throw new Violation('data', `${id}'s "${intent.data}" landed twice`);
          d.stored.push(stored);
        }
      }
      if (!answered) return;
      const event: WriterEvent = answer.ok
        ? {
            type: 'written',
            seq: write.seq,
            answer: {
              kind: 'ok',
              version: `v${answer.record.version}`,
              token: answer.token,
              top: answer.record.token,
            },
            now: 0,
          }
        : {
            type: 'written',
            seq: write.seq,
            answer: config.conflictView
              ? {
                  kind: 'conflict',
                  view: viewOf(d.record, id, acquisitionOf(config, w), d.now, config.limit),
                }
              : { kind: 'conflict' },
            now: 0,
          };
      d.net.push({ kind: 'answer', w, event });
    };
    add(`${label} ${message.timedOut ? 'lands late' : 'applied'}`, (d) => applied(d, !message.timedOut));
    if (message.timedOut) {
      add(`${label} never lands`, (d) => void take(d));
      return;
    }
    if (!canFault) return;
    add(`${label} applied, answer lost`, (d) => {
      applied(d, false);
      d.faults++;
      deliver(d, config, w, { type: 'written', seq: write.seq, answer: { kind: 'unknown' }, now: d.now });
    });
    add(`${label} times out`, (d) => {
      take(d);
      d.net.push({ ...message, timedOut: true });
      d.faults++;
      deliver(d, config, w, { type: 'written', seq: write.seq, answer: { kind: 'unknown' }, now: d.now });
    });
    add(`${label} refused`, (d) => {
      take(d);
      d.faults++;
      deliver(d, config, w, { type: 'written', seq: write.seq, answer: { kind: 'refused' }, now: d.now });
    });
  });
  if (world.now < config.maxTime) add('tick', (d) => void d.now++);
  // Only a record no live lease is in (what a TTL or lifecycle rule on stale records deletes).
  if (
    world.deletes < (config.deletes ?? 0) &&
    world.record !== null &&
    isClaimable(world.record, world.now, 1)
  ) {
    add('the record is deleted', (d) => {
      d.versionFloor = d.record!.version;
      d.record = null;
      d.deletes++;
    });
  }
  if (world.forceReleases < config.forceReleases && (world.record?.holders.length ?? 0) > 0) {
    add('operator forceRelease', (d) => {
      for (const holder of d.record!.holders) {
        config.writers.forEach((_, w) => {
          if (acquisitionOf(config, w) === holder.writer) d.forced.push(config.writers[w]!.id);
        });
      }
      d.record = forceFree(d.record!);
      d.forceReleases++;
    });
  }
  return next;
}

/** The calls user code may make on writer `w` now. */
function userCalls(
  world: World,
  config: ExploreConfig,
  w: number,
  add: (label: string, change: (draft: Draft) => void) => void,
): void {
  const writer = world.writers[w]!;
  const id = writer.writer;
  const call = (label: string, event: WriterEvent) =>
    add(`${id}: ${label}`, (d) => {
      d.userActions[w]!++;
      if (event.type === 'release' || event.type === 'handOver') {
        if (writer.goal.kind === 'hold') d.awaiting[w] = true;
        d.asking[w] = event.data ?? null;
      }
      if (event.type === 'extend') d.changing[w] = event.data ?? null;
      if (event.type === 'release' || event.type === 'handOver' || event.type === 'giveUp') d.told[w] = false;
      deliver(d, config, w, { ...event, now: d.now } as WriterEvent);
    });
  const { goal } = writer;
  const { resumes } = config.writers[w]!;
  const entry = world.record?.holders.find((holder) => holder.writer === resumes);
  if (resumes !== undefined && !world.started[w] && writer.end === null && entry && world.record) {
    const { version, token } = world.record;
    add(`${id}: resumes ${resumes}`, (d) => {
      d.userActions[w]!++;
      d.started[w] = true;
      const event: WriterEvent = {
        type: 'resume',
        version: `v${version}`,
        token: entry.token,
        top: token,
        leaseMs: writer.terms.leaseMs,
        now: d.now,
      };
      deliver(d, config, w, event);
    });
  }
  if (goal.kind === 'acquire' && (world.started[w] || config.writers[w]!.local)) {
    call('gives up waiting', { type: 'giveUp', now: 0 });
  }
  // The driver takes one call at a time: a release, hand-over or pass waits for a change under way.
  if (goal.kind === 'hold' && goal.change !== undefined) call('closes', { type: 'giveUp', now: 0 });
  if (goal.kind === 'hold' && goal.change === undefined) {
    call('releases', { type: 'release', data: `d${world.userActions[w]}`, now: 0 });
    if (config.holdReleases !== undefined) {
      const data = `k${world.userActions[w]}`;
      call('releases, keeping the lease', { type: 'release', data, holdMs: config.holdReleases, now: 0 });
    }
    call('closes', { type: 'giveUp', now: 0 });
    if (config.extendTo !== undefined) {
      call('extends', { type: 'extend', leaseMs: config.extendTo, data: undefined, now: 0 });
    }
    if (config.updates) {
      const data = `u${world.userActions[w]}`;
      call('updates', { type: 'extend', leaseMs: writer.terms.leaseMs, data, now: 0 });
    }
    if (config.passes) call('passes on', { type: 'pass', leaseMs: writer.terms.leaseMs, now: 0 });
    config.writers.forEach((other, to) => {
      if (
        other.local &&
        to !== w &&
        world.writers[to]!.goal.kind === 'acquire' &&
        !world.writers[to]!.lease
      ) {
        call(`hands over to ${other.id}`, {
          type: 'handOver',
          to: other.id,
          leaseMs: other.terms.leaseMs,
          data: `h${world.userActions[w]}`,
          now: 0,
        });
      }
    });
  }
  if (goal.kind === 'release' && writer.pending?.mayHaveLanded) {
    // Told the first release's outcome is unknown, the caller releases again with other data.
    call('releases again', { type: 'release', data: `r${world.userActions[w]}`, now: 0 });
  }
}

/** Which of its writer's requests a message is, or answers: `write <seq>` or `read <for>`. */
function awaitedBy(message: Message): string {
  if (message.kind === 'write') return `write ${message.write.seq}`;
  if (message.kind === 'read') return `read ${message.for}`;
  const { event } = message;
  if (event.type === 'written') return `write ${event.seq}`;
  return event.type === 'read' || event.type === 'readFailed' ? `read ${event.for}` : '';
}

/** The writers whose callers believe they hold the key now. */
export function believersOf(world: World): WriterState[] {
  return world.writers.filter(
    (writer, w) =>
      // What the caller was told (acquired, not lost, not released since), within the deadline
      // it goes by; a caller that called release (or handed over) has left its critical section.
      world.told[w] === true &&
      world.now - world.lag[w]! < effectiveDeadline(writer) &&
      !world.forced.includes(writer.writer),
  );
}

/** The invariants every state must keep. */
export function checkWorld(world: World, config: ExploreConfig): void {
  const believers = believersOf(world);
  // Live entries of clients outside the configuration hold as well.
  const outside = (world.record?.holders ?? []).filter(
    (holder) =>
      !config.writers.some((_, w) => acquisitionOf(config, w) === holder.writer) &&
      (holder.expiresAt === null || world.now < holder.expiresAt),
  );
  if (believers.length + outside.length > config.limit) {
    throw new Violation(
      'exclusion',
      `${[...believers.map((writer) => writer.writer), ...outside.map((holder) => holder.writer)].join(', ')} all believe they hold (limit ${config.limit})`,
    );
  }
  world.writers.forEach((writer, w) => {
    // One write awaiting its answer per writer (a copy whose request timed out may still land,
    // but the writer has stopped waiting for it, and resolves it by reading).
    const seqs = new Set(
      world.net.flatMap((message) =>
        message.w === w && message.kind === 'write' && !message.timedOut ? [message.write.seq] : [],
      ),
    );
    if (seqs.size > 1) {
      throw new Violation(
        'one-write',
        `${writer.writer} has writes ${[...seqs].join(', ')} in flight at once`,
      );
    }
  });
  world.writers.forEach((writer, w) => {
    const { pending } = writer;
    const inFlight = (kind: 'write' | 'read', seq: number) =>
      world.net.some((message) => message.w === w && awaitedBy(message) === `${kind} ${seq}`);
    if (pending?.status === 'sent' && !inFlight('write', pending.seq)) {
      throw new Violation(
        'unanswered',
        `${writer.writer} waits for write #${pending.seq}, which nothing will answer`,
      );
    }
    if (pending?.status === 'reading' && !inFlight('read', pending.seq)) {
      throw new Violation(
        'unanswered',
        `${writer.writer} waits for a read after #${pending.seq}, which nothing will answer`,
      );
    }
  });
  world.writers.forEach((writer, w) => {
    if (world.told[w] && (writer.lease === null || writer.goal.kind !== 'hold' || writer.end !== null)) {
      throw new Violation(
        'told',
        `${writer.writer}'s caller was told it holds, but the writer keeps no lease for it (goal ${writer.goal.kind}, end ${writer.end})`,
      );
    }
    // (A resume whose renewal cannot land ends: that is its caller's answer.)
    if (writer.end !== null && writer.goal.kind === 'acquire' && !writer.goal.resuming) {
      throw new Violation(
        'abandoned',
        `${writer.writer} ended (${writer.end}) while its caller still waits to acquire`,
      );
    }
  });
  for (const writer of world.writers) {
    if (writer.end !== null) continue;
    const idle = writer.pending === null && !writer.reading;
    if (writer.pending?.status === 'unknown') {
      throw new Violation('unresolved', `${writer.writer} has a write of unknown outcome and no read for it`);
    }
    if (idle && writer.goal.kind !== 'acquire' && writer.goal.kind !== 'hold') {
      throw new Violation('stalled', `${writer.writer} wants to ${writer.goal.kind} but sends nothing`);
    }
    if (idle && writer.goal.kind === 'hold' && writer.lease === null) {
      throw new Violation('stalled', `${writer.writer} holds with no lease and sends nothing`);
    }
  }
  world.writers.forEach((writer, w) => {
    // A caller's release whose write may have landed is answered once the read that would
    // resolve it failed (or a copy came back refused or unknown): the writer resolves it in the
    // background, and the caller is not kept waiting out an outage.
    const { pending } = writer;
    const ownWrite =
      pending?.intent.kind === 'release' ||
      pending?.intent.kind === 'handOver' ||
      isReleaseWrite(writer, pending);
    if (world.awaiting[w] && pending?.mayHaveLanded && pending.status === 'backoff' && ownWrite) {
      throw new Violation(
        'kept-waiting',
        `${writer.writer}'s caller still waits for a release whose outcome is unknown`,
      );
    }
  });
  world.writers.forEach((writer, w) => {
    // A holder whose lease nothing renews must look at the record now and then, or it would never
    // learn that an operator freed the key.
    const idle = writer.pending === null && !writer.reading && writer.end === null;
    const watching = writer.terms.verifyMs !== undefined && nothingRenews(writer.terms);
    if (
      idle &&
      watching &&
      writer.goal.kind === 'hold' &&
      writer.lease &&
      world.timers[w]!.verify === undefined
    ) {
      throw new Violation(
        'unwatched',
        `${writer.writer} holds a lease nothing renews, and never looks at the record`,
      );
    }
  });
  const quiet =
    world.net.length === 0 && world.writers.every((writer) => writer.pending === null && !writer.reading);
  if (!quiet || world.record === null) return;
  for (const holder of world.record.holders) {
    if (holder.expiresAt !== null) continue;
    const keeps = world.writers.some(
      (writer, w) =>
        acquisitionOf(config, w) === holder.writer && writer.end === null && writer.lease !== null,
    );
    if (!keeps) {
      throw new Violation(
        'held-for-ever',
        `the record keeps a fail-closed lease of ${holder.writer} (written by ${holder.by} #${holder.seq}), and no writer believes it holds it`,
      );
    }
  }
}
