// The `latch` command from the packed @latch/cli, through npx as a user runs it: --help, a
// `latch run` against the local S3 server, and a held lock refusing a second run.
import { expect, run } from '../lib.mjs';

export const cliApp = {
  name: 'cli',
  template: new URL('./', import.meta.url),
  files: ['package.json'],
  tarballs: ['core', 'cli'],
  check: checkCli,
};

async function checkCli({ dir, line, env, label, backends }) {
  const store = `s3://${backends.bucket}/cli/`;
  const cliEnv = { ...env, AWS_ENDPOINT_URL: backends.s3Endpoint };
  const latch = async (...args) => {
    const result = await run('npx', ['latch', ...args], { cwd: dir, env: cliEnv, label, timeoutMs: 30_000 });
    result.shown = `exit ${result.code}: ${`${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-6).join(' | ')}`;
    return result;
  };

  const help = await latch('--help');
  expect(help.code === 0, `latch --help: ${help.shown}`);
  expect(/^Usage: latch /m.test(help.stdout), `latch --help printed no usage: ${help.shown}`);

  const script =
    'console.log("deploy ran on node " + process.version + " with token " + process.env.LATCH_FENCING_TOKEN)';
  const first = await latch(
    'run',
    '--store',
    store,
    '--name',
    'deploy',
    '--lease',
    '30s',
    '--',
    'node',
    '-e',
    script,
  );
  expect(first.code === 0, `latch run: ${first.shown}`);
  const ran = /deploy ran on node (v[\d.]+) with token (\d+)/.exec(first.stdout);
  expect(ran, `latch run did not pass on the command's output: ${first.shown}`);
  expect(ran[1].startsWith(`v${line.major}.`), `the command ran on ${ran[1]}, expected Node ${line.major}`);
  const token = Number(ran[2]);

  // While another holder has the lock, `run --wait 0` must not run the command: exit 3.
  const acquired = await latch('acquire', '--store', store, '--name', 'deploy', '--lease', '30s');
  expect(acquired.code === 0, `latch acquire: ${acquired.shown}`);
  const { handle, fencingToken } = JSON.parse(acquired.stdout);
  expect(fencingToken > token, `latch acquire got token ${fencingToken} after ${token}`);
  const refused = await latch(
    'run',
    '--store',
    store,
    '--name',
    'deploy',
    '--wait',
    '0',
    '--',
    'node',
    '-e',
    script,
  );
  expect(
    refused.code === 3 && !refused.stdout.includes('deploy ran'),
    `latch run on a held lock: ${refused.shown} (expected exit 3, command not run)`,
  );
  const released = await latch('release', '--store', store, '--handle', handle);
  expect(released.code === 0, `latch release: ${released.shown}`);
  const status = await latch('status', '--store', store, '--name', 'deploy', '--json');
  expect(status.code === 0, `latch status: ${status.shown}`);
  const info = JSON.parse(status.stdout);
  expect(
    info.state === 'free' && info.fencingToken === fencingToken,
    `latch status after release: ${status.stdout.trim()}`,
  );

  return (
    `npx latch --help exit 0; latch run exit 0 ("deploy ran on node ${ran[1]} with token ${token}"); ` +
    `held by latch acquire → latch run --wait 0 exit 3; release exit 0; status free at token ${info.fencingToken}`
  );
}
