import type { ChildProcess } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { DemoHub } from '../src/launcher/demo-hub.js';
import type { HoldLane } from '../src/launcher/hold-timeline.js';
import type { ReplicaState } from '../src/launcher/replica-supervisor.js';
import type { WireLockEvent } from '../src/shared/ipc-messages.js';

// The hub's side of the timeline: lock events and replica exits reach the hold timeline, and
// the dashboards get the lanes that changed, in batches, through the feed.

const replica = (name: string): ReplicaState => ({
  name,
  pid: 1,
  port: 1,
  owner: `${name}:pid1`,
  status: 'up',
  restartAt: null,
});
const child = {} as ChildProcess;

let hub: DemoHub;
let sent: Array<{ event: string; data: unknown }>;

beforeEach(() => {
  vi.useFakeTimers();
  hub = new DemoHub({
    store: 'memory',
    leaseMs: 4_000,
    notices: [],
    memoryHost: undefined,
    queue: undefined,
  });
  sent = [];
  vi.spyOn(hub.feed, 'send').mockImplementation((event, data) => void sent.push({ event, data }));
});

afterEach(() => {
  hub.close();
  vi.useRealTimers();
});

const lockEvent = (event: WireLockEvent) =>
  hub.onReplicaMessage(replica(event.owner.split(':')[0]!), { type: 'lock-event', event }, child);
const holdPushes = () =>
  sent.filter((m) => m.event === 'holds').map((m) => m.data as { lanes: HoldLane[]; keys: string[] });

describe('the hub feeds the hold timeline', () => {
  test('a burst of events goes out as one push of the changed lanes, with every key kept', () => {
    lockEvent({
      type: 'acquired',
      key: 'billing/leader',
      owner: 'replica-1:pid1',
      at: 0,
      fencingToken: 1,
      expiresAt: 4_000,
    });
    vi.runOnlyPendingTimers();
    lockEvent({
      type: 'acquired',
      key: 'invoice/A',
      owner: 'replica-2:pid1',
      at: 10,
      fencingToken: 1,
      expiresAt: 4_010,
    });
    lockEvent({ type: 'waiting', key: 'invoice/A', owner: 'replica-3:pid1', at: 20 });
    lockEvent({ type: 'released', key: 'invoice/A', owner: 'replica-2:pid1', at: 30, fencingToken: 1 });
    expect(holdPushes()).toHaveLength(1);
    vi.runOnlyPendingTimers();

    const pushes = holdPushes();
    expect(pushes).toHaveLength(2);
    expect(pushes[1]!.lanes.map((lane) => lane.key)).toEqual(['invoice/A']);
    expect(pushes[1]!.lanes[0]).toMatchObject({
      holds: [{ replica: 'replica-2', ending: 'released' }],
      waits: [{ replica: 'replica-3' }],
    });
    expect(pushes[1]!.keys).toEqual(['billing/leader', 'invoice/A']);
    // A dashboard that connects now gets every lane at once.
    expect(hub.snapshot().holds.map((lane) => lane.key)).toEqual(['billing/leader', 'invoice/A']);
  });

  test('a replica that dies leaves its holds to run out and its waits ended', () => {
    lockEvent({
      type: 'acquired',
      key: 'billing/leader',
      owner: 'replica-1:pid1',
      at: 0,
      fencingToken: 1,
      expiresAt: 4_000,
    });
    lockEvent({ type: 'waiting', key: 'invoice/A', owner: 'replica-1:pid1', at: 5 });
    vi.runOnlyPendingTimers();
    hub.onReplicaExit({ ...replica('replica-1'), status: 'killed' }, 'replica-1:pid1');
    vi.runOnlyPendingTimers();

    const last = holdPushes().at(-1)!;
    expect(last.lanes.map((lane) => lane.key).sort()).toEqual(['billing/leader', 'invoice/A']);
    const lanes = hub.snapshot().holds;
    expect(lanes.find((l) => l.key === 'billing/leader')!.holds[0]).toMatchObject({
      ending: 'expired',
      end: 4_000,
    });
    expect(lanes.find((l) => l.key === 'invoice/A')!.waits[0]).toMatchObject({ outcome: 'gone' });
  });
});
