import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBLocal,
  type FaultProxy,
  faultProxy,
  type S3Server,
  startDynamoDBLocal,
  startS3Server,
} from '@latch/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ensureLockTable } from '../../src/index.js';
import { type DynamoDBThrottler, startDynamoDBThrottler } from './harness/dynamodb-throttler.js';
import {
  dynamoNetworkFaults,
  dynamoThrottling,
  NETWORK_FAULT_KINDS,
  type NetworkFaultKind,
  s3NetworkFaults,
  s3Throttling,
} from './harness/fault-injectors.js';
import { runScenario, type Scenario, type ScenarioResult } from './harness/run-scenario.js';
import { formatSummaryTable, type SummaryRow } from './harness/summary-table.js';
import type { StoreSpec } from './harness/worker-processes.js';

// The reliability suite: worker processes contend for a few keys through @latch/core while
// holders are killed, the network misbehaves, the store throttles, event loops freeze and
// clocks disagree. Each holder keeps its lock for longer than a heartbeat, writing a protected
// resource with fencing several times, and checks `isHeld` and its signal before each write.
// The checker then proves that no two holders ever believed they held a key at once (whatever
// fencing did), that accepted sections never overlapped, and that every unit of work landed
// exactly once. One summary table is printed at the end (and quoted in the README).

const LEASE_MS = 2000;
// The default heartbeat: a third of the lease.
const HEARTBEAT_MS = LEASE_MS / 3;
// Each unit holds its lock for one and a half heartbeats, so locks are renewed under every fault,
// writing the resource at its begin and then four times, a quarter of the hold apart.
const HOLD_MS = 1.5 * HEARTBEAT_MS;
const STEPS = 4;
// A dead or frozen holder's lock must move within its lease plus this margin: one poll, one or
// two store requests and the next holder's first write, on a busy two-core machine.
const RECOVERY_MARGIN_MS = 3000;

// Each scenario has its own deadline inside (the processes are killed and the run fails); this is only the outer bound.
const SCENARIO_TIMEOUT_MS = 120_000;

const rows: SummaryRow[] = [];
/** What else each run met, printed under the table. */
const notes: string[] = [];
let s3: S3Server;
let ddb: DynamoDBLocal;
let run = 0;

beforeAll(async () => {
  s3 = await startS3Server({ bucket: 'chaos' });
  ddb = await startDynamoDBLocal();
  const admin = new DynamoDBClient({
    endpoint: ddb.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'chaos', secretAccessKey: 'chaos' },
  });
  await ensureLockTable(admin, { table: 'chaos' });
  admin.destroy();
});

afterAll(async () => {
  if (rows.length) {
    const summary = formatSummaryTable(rows);
    console.log(
      `\nReliability summary (lease ${LEASE_MS} ms, heartbeat ${Math.round(HEARTBEAT_MS)} ms, each lock held ${Math.round(HOLD_MS)} ms, ${1.5 * LEASE_MS} ms with slow renewals)\n\n${summary}\n\nAlso met:\n${notes.join('\n')}\n`,
    );
  }
  await s3?.stop();
  await ddb?.stop();
});

type StoreName = 'memory' | 's3' | 'dynamodb';

/** A fresh key prefix per run, so scenarios sharing a backend never meet. */
function freshPrefix(name: string): string {
  return `chaos/${++run}-${name.replace(/\W+/g, '-')}`;
}

const s3Spec = (): StoreSpec => ({ kind: 's3', endpoint: s3.endpoint, bucket: 'chaos' });
const dynamoSpec = (endpoint = ddb.endpoint): StoreSpec => ({ kind: 'dynamodb', endpoint, table: 'chaos' });

function base(name: string, store: StoreName, spec: StoreSpec): Scenario {
  return {
    name,
    storeName: store,
    store: spec,
    keyPrefix: freshPrefix(`${name}-${store}`),
    processes: store === 'memory' ? 1 : 3,
    workersPerProcess: store === 'memory' ? 4 : 2,
    // The memory store lives in one process, so its workers each get a client and meet in the store.
    clients: store === 'memory' ? 'per-worker' : 'per-process',
    keys: 2,
    unitsPerWorker: 3,
    holdMs: HOLD_MS,
    steps: STEPS,
    leaseMs: LEASE_MS,
  };
}

async function record(scenario: Scenario): Promise<ScenarioResult> {
  const result = await runScenario(scenario);
  rows.push(result.row);
  const met = [
    ...Object.entries(result.typedErrors).map(([name, count]) => `${count} ${name}`),
    ...(result.abandonedAfterLoss ? [`${result.abandonedAfterLoss} holders stopped by their signal`] : []),
    ...(result.lostOnArrival ? [`${result.lostOnArrival} locks already lost when acquire returned`] : []),
  ];
  if (met.length) notes.push(`- ${result.row.scenario}, ${result.row.store}: ${met.join(', ')}`);
  return result;
}

/**
 * What must hold in every scenario: never held twice, nothing lost, only typed errors, and
 * locks renewed while held. Where the clock model promises exclusivity (every scenario but
 * trusted clocks skewed beyond their tolerance), no two holders may ever have believed they
 * held a key at the same time, whether or not fencing refused the writes.
 */
function expectSafe(result: ScenarioResult, { exclusive = true } = {}): void {
  expect(result.processFailures).toEqual([]);
  expect(result.untypedErrors).toEqual([]);
  expect(result.lostOnArrival).toBe(0);
  if (exclusive) expect(result.check.unfencedOverlaps).toEqual([]);
  expect(result.check.overlaps).toEqual([]);
  expect(result.check.sharedTokens).toEqual([]);
  expect(result.check.tokenOrderViolations).toEqual([]);
  expect(result.check.lostUnits).toEqual([]);
  expect(result.check.doubledUnits).toEqual([]);
  expect(result.check.acquisitions).toBeGreaterThan(0);
  expect(result.renewals, 'renewals while locks were held').toBeGreaterThan(0);
}

/** Latency spikes, resets, lost responses and late applications each met the workers' requests, not just some. */
function expectEveryKindFired(result: ScenarioResult, firedByKind: Record<NetworkFaultKind, number>): void {
  const counts = NETWORK_FAULT_KINDS.map((kind) => `${firedByKind[kind]} ${kind}`).join(', ');
  notes.push(`- ${result.row.scenario}, ${result.row.store}: faults that met a request: ${counts}`);
  for (const kind of NETWORK_FAULT_KINDS) {
    expect(firedByKind[kind], `${kind} faults that met a request`).toBeGreaterThan(0);
  }
}

const stores = (...names: StoreName[]) => names;
const specFor = (store: StoreName): StoreSpec =>
  store === 'memory' ? { kind: 'memory' } : store === 's3' ? s3Spec() : dynamoSpec();

describe('baseline contention', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  test.each(stores('memory', 's3', 'dynamodb'))('%s: every unit lands once, no overlap', async (store) => {
    const result = await record(base('baseline', store, specFor(store)));
    expectSafe(result);
  });
});

describe('kill -9 of a holder', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  test.each(stores('s3', 'dynamodb'))(
    "%s: the lock moves once the dead holder's lease is over, within a margin, nothing lands twice",
    async (store) => {
      const scenario: Scenario = {
        ...base('kill -9 holder', store, specFor(store)),
        processes: 4,
        // Killed inside a section (the resource has its begin, the lease is still running): the
        // process writing the 3rd begin of the run, then the one writing the 12th.
        killAtBegins: [3, 12],
      };
      const result = await record(scenario);
      expectSafe(result);
      expect(result.recoveriesMs).toHaveLength(2);
      for (const ms of result.recoveriesMs) expect(ms).toBeLessThanOrEqual(LEASE_MS + RECOVERY_MARGIN_MS);
      // Not before the dead holder's lease ran out: the next acquisition began (its claim was
      // sent) no earlier than the end of the last lease the dead holder was granted or renewed.
      expect(result.takeovers).toHaveLength(2);
      for (const takeover of result.takeovers) {
        expect(takeover.leaseEnd).toBeGreaterThan(0);
        expect(takeover.nextAcquiredAt, `next acquisition of ${takeover.key}`).toBeGreaterThanOrEqual(
          takeover.leaseEnd,
        );
      }
    },
  );
});

describe('network faults: latency spikes, resets, responses lost after the write, writes applied late', {
  timeout: SCENARIO_TIMEOUT_MS,
}, () => {
  test('s3', async () => {
    const scenario = base('network faults', 's3', s3Spec());
    const faults = s3NetworkFaults(s3, new RegExp(`^${scenario.keyPrefix}/`));
    scenario.faults = faults;
    const result = await record(scenario);
    expectSafe(result);
    expect(result.row.faults).toBeGreaterThan(0);
    expectEveryKindFired(result, faults.firedByKind);
  });

  test('dynamodb (through a TCP fault proxy)', async () => {
    let proxy: FaultProxy | undefined;
    try {
      proxy = await faultProxy({ target: ddb.endpoint });
      const scenario = base('network faults', 'dynamodb', dynamoSpec(proxy.endpoint));
      const faults = dynamoNetworkFaults(proxy);
      scenario.faults = faults;
      const result = await record(scenario);
      expectSafe(result);
      expect(result.row.faults).toBeGreaterThan(0);
      expectEveryKindFired(result, faults.firedByKind);
    } finally {
      await proxy?.close();
    }
  });
});

describe('renewals slower than half a lease', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  // Right after some acquisitions, the key's next two writes (the holder's first two renewals)
  // each take just over half a lease: long enough that the holder can no longer trust the
  // renewed lease (it was sent long ago), short enough that it lands before the holder's current
  // deadline. A holder that counted the renewed lease from when the renewal landed would trust
  // it past its stored end, while a waiter takes over there; holders check every 50 ms and keep
  // their lock for 1.5 leases, so the checker would see that.
  const SLOW_WRITE_MS = 0.52 * LEASE_MS;

  test.each(stores('s3', 'dynamodb'))(
    '%s: the holder stops trusting its lease; no one holds the lock twice',
    async (store) => {
      let front: DynamoDBThrottler | undefined;
      try {
        // DynamoDB's slow writes come from an HTTP front that can pick one holder's writes (its
        // waiters write too: each of their polls is a one-request claim). On S3 waiters only read
        // until the lease is over, so slowing the key's next two PUTs meets the holder's renewals.
        if (store === 'dynamodb') front = await startDynamoDBThrottler(ddb.endpoint);
        const slowWrites =
          front === undefined
            ? (key: string) => s3.faults.latency({ op: 'PutObject', key, times: 2 }, SLOW_WRITE_MS)
            : (key: string, owner: string) => front!.slowWrites(key, owner, SLOW_WRITE_MS, 2);
        const scenario: Scenario = {
          ...base('renewals slower than ½ lease', store, front ? dynamoSpec(front.endpoint) : s3Spec()),
          processes: 3,
          workersPerProcess: 1,
          keys: 1,
          unitsPerWorker: 2,
          holdMs: 1.5 * LEASE_MS,
          steps: 60,
          slowWrites: { atBegins: [1, 3, 5], arm: slowWrites },
        };
        const result = await record(scenario);
        expectSafe(result);
        expect(result.row.faults).toBeGreaterThan(0);
      } finally {
        await front?.close();
      }
    },
  );
});

describe('throttling: 503 SlowDown and DynamoDB throughput errors in bursts', {
  timeout: SCENARIO_TIMEOUT_MS,
}, () => {
  test('s3', async () => {
    const scenario = base('throttling', 's3', s3Spec());
    scenario.faults = s3Throttling(s3, new RegExp(`^${scenario.keyPrefix}/`));
    const result = await record(scenario);
    expectSafe(result);
    expect(result.row.faults).toBeGreaterThan(0);
  });

  test('dynamodb', async () => {
    let throttler: DynamoDBThrottler | undefined;
    try {
      throttler = await startDynamoDBThrottler(ddb.endpoint);
      const scenario = base('throttling', 'dynamodb', dynamoSpec(throttler.endpoint));
      scenario.faults = dynamoThrottling(throttler);
      const result = await record(scenario);
      expectSafe(result);
      expect(result.row.faults).toBeGreaterThan(0);
    } finally {
      await throttler?.close();
    }
  });
});

describe('a holder whose event loop is blocked longer than its lease', {
  timeout: SCENARIO_TIMEOUT_MS,
}, () => {
  test.each(stores('s3', 'dynamodb'))(
    '%s: its signal aborts and its late write is rejected by fencing',
    async (store) => {
      const scenario: Scenario = {
        ...base('event loop blocked', store, specFor(store)),
        // Frozen right after starting a section: the 3rd begin of the run, then the 9th.
        freezeAtBegins: [3, 9],
      };
      const result = await record(scenario);
      expectSafe(result);
      expect(result.pauses).toHaveLength(2);
      for (const pause of result.pauses) {
        // Its first look after the pause says "lost"; the write that was on the wire is refused.
        expect(pause).toMatchObject({
          heldOnFirstLook: false,
          signalAborted: true,
          lateWriteAccepted: false,
        });
      }
      expect(result.check.staleWritesRejected).toBeGreaterThanOrEqual(2);
      for (const ms of result.recoveriesMs) expect(ms).toBeLessThanOrEqual(LEASE_MS + RECOVERY_MARGIN_MS);
    },
  );
});

describe('clocks skewed by ± half a lease', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  const skewed = (mode: 'trusted' | 'untrusted', store: StoreName): Scenario => ({
    ...base(`clock skew ±½ lease, ${mode}`, store, specFor(store)),
    processes: store === 'memory' ? 1 : 2,
    workersPerProcess: store === 'memory' ? 4 : 2,
    clients: 'per-worker',
    clockMode: mode,
    skewsMs: [LEASE_MS / 2, -LEASE_MS / 2],
    // The fast clocks start a little late, so they first meet a slow-clock holder: in trusted
    // mode they take its lock over at once, every run (and then whenever a slow clock holds
    // while a fast one waits), before its first renewal tells it, so it writes again meanwhile.
    startDelaysMs: [0.3 * HOLD_MS, 0],
    // One key: every worker, fast clock or slow, waits on every holder.
    keys: 1,
    unitsPerWorker: 2,
    // Waiters poll often and sections last a while, so a waiter whose clock runs ahead takes
    // the lock over in the middle of a slow-clock holder's section, before its next renewal.
    pollMs: 50,
    thinkMs: 100,
  });

  test.each(stores('memory', 's3', 'dynamodb'))(
    'trusted, %s: early takeovers happen, and fencing rejects every late write they cause',
    async (store) => {
      const result = await record(skewed('trusted', store));
      // Clocks skewed beyond the tolerance void the promise of trusted mode: holders do overlap
      // (the table shows how often); fencing is what keeps the resource right.
      expectSafe(result, { exclusive: false });
      expect(result.check.staleWritesRejected).toBeGreaterThan(0);
    },
  );

  test.each(stores('memory', 's3', 'dynamodb'))(
    'untrusted, %s: no overlap at all, fencing never needed',
    async (store) => {
      const result = await record(skewed('untrusted', store));
      expectSafe(result);
      expect(result.check.staleWritesRejected).toBe(0);
    },
  );
});
