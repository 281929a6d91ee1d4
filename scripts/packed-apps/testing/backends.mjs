// The local backends every app runs against, started from the packed @latch/testing through its
// own bin, `latch-testing up --s3 --redis --json`, on the Node line under test.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CheckFailure, expect, lineEnv, listenersOf, listening, onAbort, start, tail } from '../lib.mjs';

export const app = {
  name: 'testing',
  template: new URL('./', import.meta.url),
  files: ['package.json'],
  tarballs: ['testing'],
  /** @latch/testing has no dependencies, and its DynamoDB part must stay optional. */
  verifyInstall(dir) {
    const installed = readdirSync(join(dir, 'node_modules')).filter((name) => !name.startsWith('.'));
    expect(
      installed.length === 1 && installed[0] === '@latch',
      `expected only @latch in node_modules, found ${installed.join(', ')}`,
    );
    expect(
      !existsSync(join(dir, 'node_modules', 'amplify-dynamodb-simulator')),
      'amplify-dynamodb-simulator was installed',
    );
    return 'no other package installed';
  },
};

/** Starts S3 (bucket `locks`) and redis; resolves with their endpoints and a `stop()`. */
export async function startBackends(dir, line) {
  const bin = join(dir, 'node_modules', '.bin', 'latch-testing');
  const up = start(bin, ['up', '--s3', '--redis', '--json'], {
    cwd: dir,
    env: lineEnv(line),
    label: `latch-testing up (node ${line.major})`,
    reap: false,
    late: true, // cut short, the apps stop first: their shutdown still talks to these backends
  });
  let endpoints;
  try {
    endpoints = JSON.parse(await up.waitForLine(/^\{.*"s3"/, 20_000));
  } catch (error) {
    await up.stop(2000);
    up.reap();
    throw error;
  }
  const s3 = endpoints.s3;
  const redis = endpoints.redis;
  expect(s3?.endpoint && s3.bucket === 'locks', `unexpected s3 endpoint line: ${JSON.stringify(endpoints)}`);
  expect(redis?.url, `no redis url in ${JSON.stringify(endpoints)}`);
  const s3Port = Number(new URL(s3.endpoint).port);
  const redisPort = Number(new URL(redis.url).port);
  const endServers = () => {
    for (const port of [s3Port, redisPort]) {
      for (const pid of listenersOf(port)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
    }
  };
  // If the run is cut short: SIGTERM to `up` (it stops redis), then whatever still holds a port.
  const forget = onAbort(async () => {
    await up.stop(3000);
    up.reap();
    endServers();
  });

  return {
    s3Endpoint: s3.endpoint,
    bucket: s3.bucket,
    redisUrl: redis.url,
    summary: `s3 ${s3.endpoint}, redis ${redis.url}`,
    /** SIGTERM, as Ctrl-C would; `up` must exit 0 and leave neither server listening. */
    async stop() {
      forget();
      const { code, signal, killed } = await up.stop(10_000);
      const leftOpen = [];
      if (await listening(s3Port)) leftOpen.push(`s3 port ${s3Port}`);
      if (await listening(redisPort)) leftOpen.push(`redis port ${redisPort}`);
      up.reap();
      endServers(); // a server that outlived `up` is ended by the pid holding its port, and reported
      if (killed) throw new CheckFailure(`latch-testing up did not exit within 10 s of SIGTERM${tail(up)}`);
      expect(code === 0, `latch-testing up exited with code ${code}, signal ${signal} on SIGTERM${tail(up)}`);
      expect(leftOpen.length === 0, `still listening after latch-testing up exited: ${leftOpen.join(', ')}`);
      return 'stopped on SIGTERM with exit code 0, both ports closed';
    },
  };
}
