// One worker process of the reliability suite. It runs several workers (async loops) that take
// units of work, lock the unit's key through @latch/core (the built package, as users get it),
// and write the critical section to the protected resource with the lock's fencing token.
// The test process sends the plan over IPC ({ type: 'plan' }), waits for every process to say
// 'ready', then says 'start'; at the end this process sends its 'report' and exits.
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
    clock: {
      mode: plan.lock.clockMode,
      // Only this client's view of the wall clock is skewed; its monotonic clock is the process's.
      time: { now: () => Date.now() + spec.skewMs, monotonic: () => performance.now() },
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

/** The critical section. Returns true once the unit's commit was accepted. */
async function section(worker, unit, lock) {
  const write = (kind) =>
    post(kind, {
      key: unit.key,
      token: lock.fencingToken,
      process: plan.process,
      worker: worker.id,
      unit: unit.id,
    });
  const begin = await write('begin');
  if (!begin.accepted) return false;
  // The test picked this section to freeze in (see run-scenario.ts).
  if (begin.freeze) return pausedSection(unit, lock, write);
  await sleep(plan.sectionMs);
  // A well-behaved holder stops when its lease is lost; a write already on its way is fencing's job.
  if (lock.signal.aborted) {
    report.abandonedAfterLoss++;
    return false;
  }
  return (await write('commit')).accepted;
}

/**
 * A holder whose event loop is blocked (a long GC pause, a synchronous loop): it freezes right
 * after starting its section until another holder has taken the key over, then sends its
 * commit at once, like a write that was already on the wire.
 */
async function pausedSection(unit, lock, write) {
  const started = performance.now();
  const movedOn = () => readMirroredToken(unit.key) > lock.fencingToken;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  while (!movedOn() && performance.now() - started < plan.pauseCapMs) Atomics.wait(nap, 0, 0, 5);
  const blockedMs = Math.round(performance.now() - started);
  const { accepted } = await write('commit');
  // Timers overdue during the freeze run now; give the lock's loss timer a moment to fire.
  for (let i = 0; i < 100 && !lock.signal.aborted; i++) await sleep(20);
  report.pauses.push({
    unit: unit.id,
    key: unit.key,
    token: lock.fencingToken,
    blockedMs,
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
