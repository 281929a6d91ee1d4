import { LockClient, memoryStore } from '@latch/core';

const locks = new LockClient({ store: memoryStore() });

export async function transfer(from: string, to: string): Promise<string> {
  // Both accounts or neither: keys are taken in one global order, so a transfer the other way
  // round cannot deadlock with this one. `await using` releases both at the end of the block.
  await using accounts = await locks.acquireAll([`account/${from}`, `account/${to}`], {
    waitMs: 10_000,
  });
  const tokens = accounts.fencingTokens;
  // ... debit and credit, passing each account's token to its writes,
  // and stopping if accounts.signal aborts (one of the locks was lost).
  return `moved money from ${from} (token ${tokens[`account/${from}`]}) to ${to} (token ${tokens[`account/${to}`]})`;
}
