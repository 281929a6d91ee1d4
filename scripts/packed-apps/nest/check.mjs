// Nest 12, ESM and CommonJS: the same source (app.ts) built by each app's own tsc, run on a
// Node line. A locked route answers one of two concurrent requests 423; the @Cron job runs
// under its lock; a lock taken by hand is answered 423 by the app through @latch/core/http; the
// cron's record reads back through @latch/core/store's codec; the app shuts down on SIGTERM.
import { CheckFailure, expect, expectOneLockedOut, http, start, tail, waitFor } from '../lib.mjs';

const here = new URL('./', import.meta.url);

function nestApp(format) {
  const name = format === 'esm' ? 'nest-esm' : 'nest-cjs';
  return {
    name,
    template: new URL(`${format}/`, here),
    files: ['package.json', 'tsconfig.json'],
    sources: [[new URL('app.ts', here), 'src/main.ts']],
    tarballs: ['core', 'nest'],
    compile: [{ project: 'tsconfig.json', label: name }],
    check: (ctx) => checkNest(ctx, format === 'esm' ? 'esm' : 'commonjs'),
  };
}

export const nestEsm = nestApp('esm');
export const nestCjs = nestApp('cjs');

async function checkNest({ dir, line, env, label }, format) {
  const app = start(line.node, ['dist/main.js'], { cwd: dir, env, label });
  try {
    const ready = JSON.parse((await app.waitForLine(/^READY /, 30_000)).slice('READY '.length));
    expect(ready.format === format, `ran as ${ready.format}, expected ${format}`);
    expect(ready.node.startsWith(`v${line.major}.`), `ran on ${ready.node}, expected Node ${line.major}`);
    const base = `http://127.0.0.1:${ready.port}`;

    // Two requests for the same job at once: one runs (holding the lock 1.5 s), one is refused.
    const { done, retryAfter } = await expectOneLockedOut(`${base}/jobs/j-1/run`, app);
    // The @Locked method releases before it returns: the next request gets the lock at once.
    const again = await http('POST', `${base}/jobs/j-1/run`);
    expect(
      again.status === 200 && again.body.fencingToken > done.body.fencingToken,
      `a later POST answered ${again.status} ${JSON.stringify(again.body)} after token ${done.body.fencingToken}`,
    );

    // The cron job (every second, onLocked 'skip') has run under its lock: its counter and the
    // fencing token it saw, checked against the lock record through LockService.inspect.
    const cron = await waitFor(
      'the @Cron job running under its lock',
      async () => {
        const { body } = await http('GET', `${base}/cron`);
        return body.runs >= 1 && body.lock.fencingToken >= 1 ? body : null;
      },
      { timeoutMs: 10_000, intervalMs: 250 },
    );
    expect(
      cron.lastToken >= 1 && cron.lock.fencingToken >= cron.lastToken,
      `cron state inconsistent: ${JSON.stringify(cron)}`,
    );

    // @latch/core/http, imported by the app itself: its own answer for a lock held by hand.
    const exports = await Promise.all([
      http('POST', `${base}/exports/e-1`),
      http('POST', `${base}/exports/e-1`),
    ]);
    const refused = exports.find((r) => r.status === 423);
    expect(
      exports.some((r) => r.status === 200) &&
        refused?.body?.type === 'urn:latch:problem:locked' &&
        refused.body.answeredBy === 'app',
      `concurrent exports answered ${JSON.stringify(exports.map((r) => [r.status, r.body]))}, expected 200 ` +
        `and the app's 423 built with lockErrorToHttp from @latch/core/http${tail(app)}`,
    );
    // @latch/core/store, imported by the app itself: the cron's record through the record codec.
    const { status, body: record } = await http('GET', `${base}/cron/record`);
    expect(
      status === 200 && record.sameAfterCodec === true && record.token >= cron.lastToken && record.bytes > 0,
      `GET /cron/record answered ${status} ${JSON.stringify(record)}${tail(app)}`,
    );

    const stopped = await app.stop(5000);
    if (stopped.killed) throw new CheckFailure(`did not exit within 5 s of SIGTERM${tail(app)}`);
    return (
      `${format}: concurrent POSTs → 200 + 423 (problem+json, Retry-After ${retryAfter}), then 200 ` +
      `(token ${done.body.fencingToken} → ${again.body.fencingToken}); @Cron ran ${cron.runs}× under ` +
      `its lock (token ${cron.lastToken}, inspect: ${cron.lock.state} at ${cron.lock.fencingToken}); ` +
      `@latch/core/http: the app's own 423 for a lock held by hand; @latch/core/store: the cron's record ` +
      `(token ${record.token}, ${record.bytes} bytes) survives encodeRecord/decodeRecord; exited on SIGTERM`
    );
  } finally {
    await app.stop(1000);
  }
}
