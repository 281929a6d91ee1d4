import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { startDynamoDBLocal } from '../src/dynamodb-local.js';
import { startRedis } from '../src/redis.js';
import { distDir, ensureBuilt } from './support/ensure-built.js';
import { childrenMatching, eventuallyRefuses, isAlive, waitUntilDead } from './support/processes.js';
import { runNode } from './support/run-node.js';

const BACKEND_PROCESS = /DynamoDBLocal\.jar|redis-server/;

describe('no leaked backend processes', () => {
  it('stop() leaves no DynamoDB Local JVM or redis-server child behind', async () => {
    const [ddb, redis] = await Promise.all([startDynamoDBLocal(), startRedis()]);
    const pids = [ddb.pid, redis.pid];
    expect(childrenMatching(process.pid, BACKEND_PROCESS).map((c) => c.pid)).toEqual(
      expect.arrayContaining(pids),
    );
    await Promise.all([ddb.stop(), redis.stop()]);
    expect(pids.filter(isAlive)).toEqual([]);
    expect(childrenMatching(process.pid, BACKEND_PROCESS)).toEqual([]);
  });

  describe('a Node process that started backends and ends without calling stop()', () => {
    beforeAll(ensureBuilt, 120_000);

    /** Starts both backends from the built package, prints their PIDs and ports, then ends as `ending` says. */
    const script = (ending: string) => `
      const { startDynamoDBLocal, startRedis } = await import(${JSON.stringify(pathToFileURL(`${distDir}/index.js`).href)});
      const [ddb, redis] = await Promise.all([startDynamoDBLocal(), startRedis()]);
      console.log(JSON.stringify({ pids: [ddb.pid, redis.pid], ports: [ddb.port, redis.port] }));
      ${ending}
    `;
    const run = (ending: string) => runNode(['--input-type=module', '-e', script(ending)]);

    it('takes them along when it simply runs out of work', async () => {
      const child = run('// nothing left to do: the event loop empties and the process exits');
      const { pids, ports } = JSON.parse(await child.line(/^\{/));
      const result = await child.finished;
      expect(result.code).toBe(0);
      expect(await waitUntilDead(pids)).toEqual([]);
      for (const port of ports) expect(await eventuallyRefuses(port)).toBe(true);
    });

    it('takes them along when it is killed with SIGTERM, and still dies of SIGTERM', async () => {
      const child = run('setInterval(() => {}, 1000);');
      const { pids, ports } = JSON.parse(await child.line(/^\{/));
      expect(pids.every(isAlive)).toBe(true);
      child.child.kill('SIGTERM');
      const result = await child.finished;
      expect(result.signal).toBe('SIGTERM');
      expect(await waitUntilDead(pids)).toEqual([]);
      for (const port of ports) expect(await eventuallyRefuses(port)).toBe(true);
    });
  });
});
