import type { Campaign, LockClient } from '@latch/core';
import { LEADER_KEY } from '../shared/replica-config.js';

/**
 * Every replica campaigns for `billing/leader` (core's leader election); one leads at a time.
 * The leader holds its lock for as long as it lives, which is what the dashboard's "kill a
 * replica" shows: kill the leader, and its lease runs out and another replica takes over with
 * a higher fencing token (the term number).
 */
export function campaignForLeadership(locks: LockClient, replicaName: string): Campaign {
  return locks.campaign(LEADER_KEY, {
    context: `${replicaName} leads billing`,
    onElected() {},
    onError() {
      // The campaign retries by itself; its store errors show up as lock events on the dashboard.
    },
  });
}
