/** The lines the launcher prints once everything is up. */
export function guide(
  url: string,
  store: string,
  processes: Array<{ name: string; pid: number }>,
  queueEnabled: boolean,
): string {
  return [
    '',
    `Dashboard: ${url}`,
    '',
    `Lock store: ${store}`,
    `Processes: ${processes.map((p) => `${p.name} pid ${p.pid}`).join(', ')}`,
    '',
    'Try this:',
    '  1. Open the dashboard. Every 5 s each replica\'s scheduler fires the "nightly report";',
    '     one replica runs it, the others skip (timeline: "contended").',
    '  2. Press "Fire 20 parallel charges": charges of one invoice run one at a time across the',
    '     replicas. The network holds back a few ledger writes; when they arrive late, the',
    '     ledger refuses their stale fencing tokens. The check below the buttons says so.',
    queueEnabled
      ? '  3. Press "Enqueue 30 jobs over 3 customers": jobs of one customer never overlap, whichever\n' +
        '     replica takes them.'
      : '  3. (The BullMQ queue is skipped: see above for how to enable it.)',
    '  4. Press "Start 8 exports for customer acme": at most 2 exports of one customer run at',
    '     once (a lock with limit 2); the lock table shows both holders and who waits.',
    '  5. Kill the replica holding "billing/leader": its lease runs out, another replica takes',
    '     over with a higher fencing token.',
    '',
    'Press Ctrl-C to stop everything.',
    '',
  ].join('\n');
}
