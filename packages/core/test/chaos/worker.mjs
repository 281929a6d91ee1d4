// One worker process of the reliability suite. It runs several workers (async loops) that take
// units of work, lock the unit's key through @latch/core (the built package, as users get it),
// and write the critical section to the protected resource with the lock's fencing token: a
// begin, then a few steps spread over more than a heartbeat (so the lock is renewed while held),
// the last one being the commit. Before each write the worker checks that it still holds the lock
// (`isHeld` and a live signal) and stamps the write with the time of that check, so the checker
// can tell when two holders both believed they held the lock, whatever fencing did.
// The test process sends the plan over IPC ({ type: 'plan' }), waits for every process to say
// 'ready', then says 'start'; this process reports each acquisition and renewal its clients see
// ({ type: 'lease' }) as it happens, and at the end sends its 'report' and exits.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dynamoStore, LockClient, LockError, memoryStore, s3Store } from '@latch/core';

/** @type {any} */
let plan;
/** @type {any} */
let store;
/** @type {LockClient[]} */
const clients = [];
const report = {
  process: '',
  done: /** @type {string[]} */ ([]),
  acquisitions: 0,
  abandonedAfterLoss: 0,
  lostOnArrival: 0,
  typedErrors: /** @type {Record<string, number>} */ ({}),
  untypedErrors: /** @type {string[]} */ ([]),
  pauses: /** @type {object[]} */ ([]),
};

// If the test process goes away, so do we.
process.on('disconnect', () => process.exit(1));

process.on('message', (message) => {
  if (message.type !== 'plan') return;
  plan = message.plan;
  report.process = plan.process;
  prepare().then(
    () => {
      process.once('message', () => void run());
      process.send({ type: 'ready' });
    },
    (error) => fail(error),
  );
});

async function prepare() {
  store = await makeStore(plan.store);
  for (const [slot, spec] of plan.clients.entries()) clients[slot] = makeClient(spec);
}

function makeClient(spec) {
  return new LockClient({
    store,
    owner: spec.owner,
    leaseMs: plan.lock.leaseMs,
    pollMs: plan.lock.pollMs,
    onEvent: noteLease,
    clock: {
      mode: plan.lock.clockMode,
      // The machine's wall clock as the checker reads it (see machineNow), plus this client's
      // skew; its monotonic clock is the process's. Not Date.now(): the system clock may be
      // stepped during a run (an NTP correction), and a trusted-mode client whose wall clock
      // jumps ahead takes leases over early, which is the skew scenarios' subject, not the others'.
      time: { now: () => Math.floor(machineNow()) + spec.skewMs, monotonic: () => performance.now() },
    },
  });
}

async function makeStore(spec) {
  if (spec.kind === 'memory') return memoryStore();
  if (spec.kind === 's3') {
    const { S3Client } = await import('@aws-sdk/client-s3');
    const client = new S3Client({
      endpoint: spec.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'chaos', secretAccessKey: 'chaos' },
    });
    return s3Store({ client, bucket: spec.bucket });
  }
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  const client = new DynamoDBClient({
    endpoint: spec.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'chaos', secretAccessKey: 'chaos' },
  });
  return dynamoStore({ client, table: spec.table });
}

/** Sends each acquisition and renewal to the test process at once, so it knows them even if this process is killed. */
function noteLease(event) {
  if (event.type !== 'acquired' && event.type !== 'renewed') return;
  const { type, key, fencingToken: token, expiresAt } = event;
  process.send({ type: 'lease', lease: { type, key, token, expiresAt } });
}

/**
 * Wall-clock ms with a fraction, the same clock in every process on this machine (unlike each
 * client's skewed view of time): when a holder checked its lock.
 */
function machineNow() {
  return performance.timeOrigin + performance.now();
}

/**
 * The check a careful holder makes before each protected write. `isHeld` is read first: reading
 * it past the holder's own loss deadline (a process that was paused) marks the lock lost.
 */
function stillHeld(lock) {
  return lock.isHeld && !lock.signal.aborted;
}

async function run() {
  try {
    await Promise.all(plan.workers.map((worker, i) => work(worker, i % clients.length)));
    process.send({ type: 'report', report }, () => process.exit(0));
  } catch (error) {
    fail(error);
  }
}

function fail(error) {
  process.send({ type: 'crash', error: String(error?.stack ?? error) }, () => process.exit(1));
}

async function work(worker, slot) {
  if (plan.clients[slot].startDelayMs) await sleep(plan.clients[slot].startDelayMs);
  for (const unit of worker.units) {
    if (await doUnit(worker, slot, unit)) report.done.push(unit.id);
    if (plan.thinkMs) await sleep(plan.thinkMs);
  }
}

/** Does one unit: lock its key, write the section, and retry until its commit is accepted. */
async function doUnit(worker, slot, unit) {
  for (let attempt = 0; attempt < plan.maxAttemptsPerUnit; attempt++) {
    let lock;
    try {
      lock = await clients[slot].acquire(unit.key, {
        waitMs: plan.waitMs,
        context: `${worker.id} ${unit.id}`,
      });
    } catch (error) {
      noteError(error);
      await sleep(20);
      continue;
    }
    report.acquisitions++;
    if (!lock.isHeld) {
      // acquire must never return a lock that is already lost (a claim that landed after its
      // lease): counted, and the scenario fails on it.
      report.lostOnArrival++;
      continue;
    }
    let landed = false;
    try {
      landed = await section(worker, unit, lock);
    } finally {
      await lock.release().catch(noteError);
    }
    if (landed) return true;
  }
  return false;
}

/**
 * The critical section: a begin, then `plan.steps` writes `holdMs / steps` apart, the last one
 * the commit. Each write is sent only after the check that the lock is still held, and carries
 * the time of that check. Returns true once the unit's commit was accepted.
 */
async function section(worker, unit, lock) {
  /** Sends one write; `checkedAt` is when the holder last saw its lock held (undefined: not checked). */
  const write = (kind, checkedAt) =>
    post(kind, {
      key: unit.key,
      token: lock.fencingToken,
      process: plan.process,
      worker: worker.id,
      unit: unit.id,
      checkedAt,
      acquiredAt: lock.acquiredAt,
      expiresAt: lock.expiresAt,
    });
  /** A well-behaved holder writes only while it holds the lock; a write already on its way is fencing's job. */
  const checkedWrite = async (kind) => {
    if (!stillHeld(lock)) return undefined;
    return write(kind, machineNow());
  };
  const begin = await checkedWrite('begin');
  if (!begin) {
    report.abandonedAfterLoss++;
    return false;
  }
  if (!begin.accepted) return false;
  // The test picked this section to freeze in (see run-scenario.ts).
  if (begin.freeze) return pausedSection(unit, lock, write);
  const stepMs = plan.holdMs / plan.steps;
  for (let step = 1; step <= plan.steps; step++) {
    await sleep(stepMs);
    const answer = await checkedWrite(step === plan.steps ? 'commit' : 'step');
    if (!answer) {
      report.abandonedAfterLoss++;
      return false;
    }
    if (!answer.accepted) return false;
  }
  return true;
}

/**
 * A holder whose event loop is blocked (a long GC pause, a synchronous loop): it freezes right
 * after starting its section until another holder has taken the key over. Its first look at the
 * lock afterwards must say "lost". Then it sends, unchecked, the commit that was already on the
 * wire when it froze: fencing must refuse it.
 */
async function pausedSection(unit, lock, write) {
  const started = performance.now();
  const movedOn = () => readMirroredToken(unit.key) > lock.fencingToken;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  while (!movedOn() && performance.now() - started < plan.pauseCapMs) Atomics.wait(nap, 0, 0, 5);
  const blockedMs = Math.round(performance.now() - started);
  // Before anything else runs (no timer has had a chance to fire): what a holder that wakes up
  // and checks its lock is told.
  const heldOnFirstLook = stillHeld(lock);
  const lookedAt = machineNow();
  const { accepted } = await write('commit', undefined);
  // A holder told it still holds the lock goes on writing: the checker sees it overlap.
  if (heldOnFirstLook) await write('step', lookedAt);
  // Timers overdue during the freeze run now; give the lock's loss timer a moment to fire.
  for (let i = 0; i < 100 && !lock.signal.aborted; i++) await sleep(20);
  report.pauses.push({
    unit: unit.id,
    key: unit.key,
    token: lock.fencingToken,
    blockedMs,
    heldOnFirstLook,
    lateWriteAccepted: accepted,
    signalAborted: lock.signal.aborted,
  });
  return accepted;
}

function readMirroredToken(key) {
  try {
    return Number(readFileSync(join(plan.mirrorDir, `${encodeURIComponent(key)}.token`), 'utf8'));
  } catch {
    return 0;
  }
}

/** Sends a write to the protected resource; resolves with its answer ({ accepted, freeze? }). */
async function post(kind, body) {
  const response = await fetch(`${plan.resourceUrl}/${kind}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok)
    throw new Error(`protected resource answered ${response.status}: ${await response.text()}`);
  return await response.json();
}

/** Typed lock errors are expected under faults (counted, the unit is retried); anything else fails the suite. */
function noteError(error) {
  if (error instanceof LockError) {
    report.typedErrors[error.name] = (report.typedErrors[error.name] ?? 0) + 1;
  } else {
    report.untypedErrors.push(String(error?.stack ?? error));
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
