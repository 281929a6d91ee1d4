import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));

test('a held lock with background renewal does not keep the process alive', async () => {
  expect(existsSync(dist), 'build @latch/core first (turbo builds before testing)').toBe(true);
  const script = `
    import { LockClient, memoryStore } from ${JSON.stringify(dist)};
    const locks = new LockClient({ store: memoryStore(), leaseMs: 60_000, heartbeatMs: 1_000 });
    const lock = await locks.acquire('never-released');
    console.log('held', lock.fencingToken, lock.isHeld);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  const exitCode = await new Promise<number | null>((resolve) => {
    // Renewal runs every second for a minute-long lease: a ref'd timer would keep it alive that long.
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(null);
    }, 20_000);
    child.on('exit', (code) => {
      clearTimeout(guard);
      resolve(code);
    });
  });
  expect(output.trim()).toBe('held 1 true');
  expect(exitCode).toBe(0);
});
