import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { S3Client } from '@aws-sdk/client-s3';
import { type S3Server, startS3Server } from '@latch/testing';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { LockClient, s3Store } from '../src/index.js';

// A frozen execution environment (a Lambda between invocations, a paused container, a process
// stopped by a debugger) runs no timers: heartbeats stop, and the lease runs out meanwhile.
// Here a real process holds a lock, is stopped with SIGSTOP past its lease while this process
// takes the lock, and is thawed with SIGCONT. The first look at its signal after the thaw must
// say the lock is lost (before any timer of it runs), and it must write nothing as a holder.

const core = fileURLToPath(new URL('../dist/cjs/index.js', import.meta.url));
const sdk = createRequire(import.meta.url).resolve('@aws-sdk/client-s3');
const BUCKET = 'frozen';
const LEASE_MS = 2_000;

let server: S3Server;
beforeAll(async () => {
  server = await startS3Server({ bucket: BUCKET });
});
afterAll(async () => {
  await server?.stop();
});

/** The holder: looks at its signal between slices of synchronous work, and logs every write it sends. */
function holderScript(endpoint: string): string {
  return `
    const { LockClient, s3Store } = require(${JSON.stringify(core)});
    const { S3Client } = require(${JSON.stringify(sdk)});
    const client = new S3Client({
      endpoint: ${JSON.stringify(endpoint)}, region: 'us-east-1', forcePathStyle: true,
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
    });
    const writes = [];
    const send = client.send.bind(client);
    client.send = (command, ...rest) => {
      const name = command.constructor.name;
      if (!/^(Get|Head|List)/.test(name)) writes.push({ name, at: performance.now() });
      return send(command, ...rest);
    };
    const report = (fields) => process.stdout.write(JSON.stringify(fields) + '\\n');
    (async () => {
      const locks = new LockClient({ store: s3Store({ client, bucket: ${JSON.stringify(BUCKET)} }), leaseMs: ${LEASE_MS} });
      const lock = await locks.acquire('nightly-export');
      report({ acquired: lock.fencingToken });
      const acquiredAt = performance.now();
      let asked = false;
      let lastLook = acquiredAt;
      for (;;) {
        // Slices of synchronous work, and once, after a renewal or so, a long one to be frozen in.
        let sliceMs = 50;
        if (!asked && performance.now() - acquiredAt > 800) {
          asked = true;
          sliceMs = 1_000;
          report({ freezeMe: true });
        }
        const started = performance.now();
        while (performance.now() - started < sliceMs) {}
        const now = performance.now();
        const aborted = lock.signal.aborted; // the look
        if (now - lastLook > 1_500) {
          // The first look after the freeze, before this process's timers have run again. The
          // lease ended during the freeze: another process took the lock meanwhile.
          const update = await lock.update({ by: 'frozen holder' }).then(() => 'stored', (e) => e.name);
          const release = await lock.release().then(() => 'released', (e) => e.name);
          await new Promise((resolve) => setTimeout(resolve, 300)); // let any timer of the lock run
          const written = writes.filter((w) => w.at >= lastLook + 60).map((w) => w.name);
          report({ frozenMs: Math.round(now - lastLook), firstLookAborted: aborted,
            reason: lock.signal.reason && lock.signal.reason.name, isHeld: lock.isHeld, update, release, written });
          await locks.close();
          client.destroy();
          return;
        }
        lastLook = now;
        await new Promise((resolve) => setImmediate(resolve)); // timers (the heartbeat) run here
      }
    })();
  `;
}

function lines(child: ChildProcess): () => Promise<Record<string, unknown>> {
  const queue: Record<string, unknown>[] = [];
  const waiting: ((line: Record<string, unknown>) => void)[] = [];
  let buffer = '';
  child.stdout!.on('data', (chunk) => {
    buffer += chunk;
    for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
      const line = JSON.parse(buffer.slice(0, at)) as Record<string, unknown>;
      buffer = buffer.slice(at + 1);
      const next = waiting.shift();
      if (next) next(line);
      else queue.push(line);
    }
  });
  return () => {
    const line = queue.shift();
    return line ? Promise.resolve(line) : new Promise((resolve) => waiting.push(resolve));
  };
}

test('a holder frozen past its lease (SIGSTOP) and thawed (SIGCONT) learns it on its first look, and writes nothing as a holder', async () => {
  expect(existsSync(core), 'build @latch/core first (turbo builds before testing)').toBe(true);
  const holder = spawn(process.execPath, ['-e', holderScript(server.endpoint)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_NO_WARNINGS: '1' }, // the SDK's notice about Node 20
  });
  const next = lines(holder);
  const exited = new Promise((resolve) => holder.on('exit', resolve));
  try {
    const { acquired } = (await next()) as { acquired: number };
    await next(); // it is in its long slice of work: freeze it there
    holder.kill('SIGSTOP');

    // Meanwhile another process takes the lock, once the frozen holder's lease has run out.
    const client = new S3Client({
      ...server.clientConfig(),
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
    });
    const locks = new LockClient({ store: s3Store({ client, bucket: BUCKET }), pollMs: 100 });
    const lock = await locks.acquire('nightly-export', { waitMs: 30_000, leaseMs: 30_000 });
    await lock.update({ by: 'new holder' });
    expect(lock.fencingToken).toBeGreaterThan(acquired);

    holder.kill('SIGCONT');
    const thawed = (await next()) as {
      frozenMs: number;
      firstLookAborted: boolean;
      reason: string;
      isHeld: boolean;
      update: string;
      release: string;
      written: string[];
    };
    expect(thawed.frozenMs).toBeGreaterThan(1_500);
    expect(thawed.firstLookAborted).toBe(true);
    expect(thawed.reason).toBe('LockLostError');
    expect(thawed.isHeld).toBe(false);
    expect(thawed.update).toBe('LockLostError');
    expect(thawed.release).toBe('LockLostError');
    expect(thawed.written).toEqual([]); // no renewal, update or release sent after the thaw

    // The new holder still holds it, with its own data.
    expect(lock.isHeld).toBe(true);
    const info = await locks.inspect('nightly-export');
    expect(info.fencingToken).toBe(lock.fencingToken);
    expect(info.data).toEqual({ by: 'new holder' });
    await lock.release();
    await locks.close();
    client.destroy();
    await exited;
  } finally {
    holder.kill('SIGKILL');
  }
});
