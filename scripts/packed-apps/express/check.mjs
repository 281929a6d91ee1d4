// Express 5 + @latch/express, in an app with only @aws-sdk/client-s3, type-checked with
// skipLibCheck: false. Two concurrent requests for one invoice: one 200, one 423. The app also
// imports @latch/core/http (a custom 423 handler: two concurrent report builds, 200 + its 423)
// and @latch/core/store (a store wrapper that audits the S3 store's conditional writes).
import { CheckFailure, expect, expectOneLockedOut, http, start, tail, waitFor } from '../lib.mjs';

const here = new URL('./', import.meta.url);

export const expressApp = {
  name: 'express',
  template: here,
  files: ['package.json', 'tsconfig.json'],
  sources: [[new URL('main.ts', here), 'src/main.ts']],
  tarballs: ['core', 'express'],
  compile: [{ project: 'tsconfig.json', label: 'express (skipLibCheck: false, only @aws-sdk/client-s3)' }],
  check: checkExpress,
};

async function checkExpress({ dir, line, env, label }) {
  const app = start(line.node, ['dist/main.js'], { cwd: dir, env, label });
  try {
    const ready = JSON.parse((await app.waitForLine(/^READY /, 20_000)).slice('READY '.length));
    expect(ready.node.startsWith(`v${line.major}.`), `ran on ${ready.node}, expected Node ${line.major}`);
    const url = `http://127.0.0.1:${ready.port}/invoices/inv-7/pay`;

    const { done, retryAfter } = await expectOneLockedOut(url, app);
    // The release starts once the response is sent: the lock is free again a moment later.
    const again = await waitFor(
      'a later POST getting the released lock',
      async () => {
        const r = await http('POST', url);
        return r.status === 200 ? r : null;
      },
      { timeoutMs: 5000, intervalMs: 50 },
    );
    expect(
      again.body.fencingToken > done.body.fencingToken,
      `fencing token did not increase: ${done.body.fencingToken} then ${again.body.fencingToken}`,
    );

    // @latch/core/http: the app's own 423 handler answers with lockErrorToHttp's answer.
    const report = await expectOneLockedOut(`http://127.0.0.1:${ready.port}/reports/r-1/build`, app);
    expect(
      report.locked.headers.get('x-answered-by') === 'app',
      `the 423 for a held report did not come from the app's handler (lockErrorToHttp from @latch/core/http)${tail(app)}`,
    );
    // @latch/core/store: every lock went through the app's audited store, records round-trip.
    const { body: audit } = await http('GET', `http://127.0.0.1:${ready.port}/audit`);
    expect(
      audit.writes >= 4 && audit.lastToken >= 1 && audit.roundTrip === true,
      `the audited store (written against @latch/core/store) saw ${JSON.stringify(audit)}, expected ` +
        'at least 4 conditional writes and a record that survives encodeRecord/decodeRecord',
    );

    const stopped = await app.stop(5000);
    if (stopped.killed) throw new CheckFailure(`did not exit within 5 s of SIGTERM${tail(app)}`);
    expect(stopped.code === 0, `exited with code ${stopped.code}, signal ${stopped.signal}${tail(app)}`);
    return (
      `concurrent POSTs → 200 + 423 (problem+json, Retry-After ${retryAfter}), then 200 once released ` +
      `(token ${done.body.fencingToken} → ${again.body.fencingToken}); @latch/core/http: the app's own ` +
      `handler answered 423 (Retry-After ${report.retryAfter}); @latch/core/store: its audited store saw ` +
      `${audit.writes} conditional writes, records round-trip; closed its LockClient and exited 0 on SIGTERM`
    );
  } finally {
    await app.stop(1000);
  }
}
