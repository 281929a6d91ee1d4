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
  type NetworkFaultKind,
  s3NetworkFaults,
  s3Throttling,
} from './harness/fault-injectors.js';
import { runScenario, type Scenario, type ScenarioResult } from './harness/run-scenario.js';
import { formatSummaryTable, type SummaryRow } from './harness/summary-table.js';
import type { StoreSpec } from './harness/worker-processes.js';

// The reliability suite: worker processes contend for a few keys through @latch/core while
// holders are killed, the network misbehaves, the store throttles, event loops freeze and
// clocks disagree. A protected resource with fencing records every critical section; the
// checker then proves that accepted sections never overlapped and every unit of work landed
// exactly once. One summary table is printed at the end (and quoted in the README).

const LEASE_MS = 2000;
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
      `\nReliability summary (lease ${LEASE_MS} ms)\n\n${summary}\n\nAlso met:\n${notes.join('\n')}\n`,
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
    unitsPerWorker: 8,
    sectionMs: 15,
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

/** What must hold in every scenario: never held twice, nothing lost, only typed errors. */
function expectSafe(result: ScenarioResult): void {
  expect(result.processFailures).toEqual([]);
  expect(result.untypedErrors).toEqual([]);
  expect(result.lostOnArrival).toBe(0);
  expect(result.check.overlaps).toEqual([]);
  expect(result.check.sharedTokens).toEqual([]);
  expect(result.check.tokenOrderViolations).toEqual([]);
  expect(result.check.lostUnits).toEqual([]);
  expect(result.check.doubledUnits).toEqual([]);
  expect(result.check.acquisitions).toBeGreaterThan(0);
}

/** Latency spikes, resets and lost responses each met the workers' requests, not just one of them. */
function expectEveryKindFired(firedByKind: Record<NetworkFaultKind, number>): void {
  for (const kind of ['latency', 'reset', 'lost response'] as const) {
    expect(firedByKind[kind], `${kind} faults fired`).toBeGreaterThan(0);
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
    '%s: the lock moves within the lease plus a margin, nothing lands twice',
    async (store) => {
      const scenario: Scenario = {
        ...base('kill -9 holder', store, specFor(store)),
        processes: 4,
        unitsPerWorker: 6,
        // Killed inside a section (the resource has its begin, the lease is still running): the
        // process writing the 3rd begin of the run, then the one writing the 12th.
        killAtBegins: [3, 12],
      };
      const result = await record(scenario);
      expectSafe(result);
      expect(result.recoveriesMs).toHaveLength(2);
      for (const ms of result.recoveriesMs) expect(ms).toBeLessThanOrEqual(LEASE_MS + RECOVERY_MARGIN_MS);
    },
  );
});

describe('network faults: latency spikes, resets, responses lost after the write', {
  timeout: SCENARIO_TIMEOUT_MS,
}, () => {
  test('s3', async () => {
    const scenario = base('network faults', 's3', s3Spec());
    const faults = s3NetworkFaults(s3, new RegExp(`^${scenario.keyPrefix}/`));
    scenario.faults = faults;
    const result = await record(scenario);
    expectSafe(result);
    expect(result.row.faults).toBeGreaterThan(0);
    expectEveryKindFired(faults.firedByKind);
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
      expectEveryKindFired(faults.firedByKind);
    } finally {
      await proxy?.close();
    }
  });
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
        unitsPerWorker: 6,
        // Frozen right after starting a section: the 3rd begin of the run, then the 14th.
        freezeAtBegins: [3, 14],
      };
      const result = await record(scenario);
      expectSafe(result);
      expect(result.pauses).toHaveLength(2);
      for (const pause of result.pauses) {
        expect(pause).toMatchObject({ signalAborted: true, lateWriteAccepted: false });
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
    // One key: every worker, fast clock or slow, waits on every holder.
    keys: 1,
    unitsPerWorker: 5,
    // Waiters poll often and sections last a while, so a waiter whose clock runs ahead takes
    // the lock over in the middle of a slow-clock holder's section, before its next renewal.
    pollMs: 50,
    sectionMs: 300,
    thinkMs: 100,
  });

  test.each(stores('memory', 's3', 'dynamodb'))(
    'trusted, %s: early takeovers happen, and fencing rejects every late write they cause',
    async (store) => {
      const result = await record(skewed('trusted', store));
      expectSafe(result);
      expect(result.check.staleWritesRejected).toBeGreaterThan(0);
    },
  );

  test.each(stores('memory', 's3', 'dynamodb'))(
    'untrusted, %s: no overlap at all, fencing never needed',
    async (store) => {
      const result = await record(skewed('untrusted', store));
      expectSafe(result);
      expect(result.check.unfencedOverlaps).toBe(0);
      expect(result.check.staleWritesRejected).toBe(0);
    },
  );
});
