// The README examples as a user meets them. Every example of every package
// (packages/*/examples/*.ts and *.sh, listed when the run starts, so a new one is picked up with
// no change here) is copied into an app that installs all the packed packages. The app's tsc
// type-checks the TypeScript ones with skipLibCheck: false. Then, on the recommended Node line,
// main.ts runs core's examples against the S3 server and DynamoDB Local from the packed
// @latch/testing, and the CLI's scripts with the packed `latch` bin. It expects what each
// package's own tests expect of them, the Serverless section's Lambda handler included.
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { RECOMMENDED_NODE_MAJOR } from '../../node-lines.mjs';
import { expect, run } from '../lib.mjs';

const here = new URL('./', import.meta.url);
const packagesDir = new URL('../../../packages/', import.meta.url);

/** Every package's examples, each as `<package folder>/<file>`. */
function listExamples() {
  const found = [];
  for (const pkg of readdirSync(packagesDir, { withFileTypes: true })) {
    if (!pkg.isDirectory()) continue;
    let files;
    try {
      files = readdirSync(new URL(`${pkg.name}/examples/`, packagesDir));
    } catch {
      continue; // a package without examples
    }
    for (const file of files.sort()) {
      if (file.endsWith('.ts') || file.endsWith('.sh')) found.push(`${pkg.name}/${file}`);
    }
  }
  return found;
}

const examples = listExamples();
const typescript = examples.filter((name) => name.endsWith('.ts'));

/** How many of `names` each package has: "core 10, express 2". */
function perPackage(names) {
  const counts = new Map();
  for (const name of names) counts.set(name.split('/')[0], (counts.get(name.split('/')[0]) ?? 0) + 1);
  return [...counts].map(([pkg, count]) => `${pkg} ${count}`).join(', ');
}

/**
 * The examples main.ts must have run, whatever it plans: core's (the Serverless section's
 * lambda.ts among them), which core's tests run, and the CLI's scripts, which its tests run.
 */
const MUST_RUN = [
  'core/quick-start.ts',
  'core/s3-deploy-lock.ts',
  'core/dynamodb-invoice.ts',
  'core/lambda.ts',
  'core/transfer.ts',
  'core/export-limit.ts',
  'core/handoff.ts',
  'core/leader-election.ts',
  'core/s3-list-lock.ts',
  'core/telemetry.ts',
  'cli/deploy-pipeline.sh',
  'cli/limited-deploys.sh',
];

export const examplesApp = {
  name: 'examples',
  template: here,
  files: ['package.json', 'tsconfig.json'],
  sources: [
    [new URL('main.ts', here), 'src/main.ts'],
    ...examples.map((name) => [
      new URL(name.replace('/', '/examples/'), packagesDir),
      `src/examples/${name}`,
    ]),
  ],
  tarballs: ['core', 'express', 'nest', 'bullmq', 'cli', 'testing'],
  compile: [
    {
      project: 'tsconfig.json',
      label:
        `examples: ${typescript.length} TypeScript README examples (${perPackage(typescript)}) ` +
        'with skipLibCheck: false, nodenext, the packages as installed',
    },
  ],
  // What it runs does not differ between Node lines (the other apps cover those): one is enough.
  lines: [RECOMMENDED_NODE_MAJOR],
  check: checkExamples,
};

/** DynamoDB Local's files, from the workspace's amplify-dynamodb-simulator (as the lambda app). */
function dynamodbLocalJarDir() {
  const testing = new URL('../../../packages/testing/package.json', import.meta.url);
  return join(dirname(createRequire(testing).resolve('amplify-dynamodb-simulator/package.json')), 'emulator');
}

async function checkExamples({ dir, line, env }) {
  const result = await run(line.node, ['dist/main.js'], {
    cwd: dir,
    env: { ...env, DYNAMODB_LOCAL_JAR_DIR: dynamodbLocalJarDir() },
    timeoutMs: 120_000,
    label: `examples on node ${line.major}`,
  });
  const lines = result.stdout.split('\n');
  const failed = lines.filter((l) => l.startsWith('FAILED ') || l.startsWith('    '));
  const ran = new Map(
    lines
      .filter((l) => l.startsWith('RAN '))
      .map((l) => {
        const [name, ...rest] = l.slice('RAN '.length).split(': ');
        return [name, rest.join(': ')];
      }),
  );
  expect(
    result.code === 0 && failed.length === 0,
    `dist/main.js exited ${result.code}${result.timedOut ? ' (timed out)' : ''} on node ${line.major}:\n    ` +
      [...failed, ...result.stderr.trim().split('\n').slice(-10)].slice(0, 40).join('\n    '),
  );
  const notRun = MUST_RUN.filter((name) => !ran.has(name));
  expect(
    notRun.length === 0,
    `dist/main.js did not run ${notRun.join(', ')}; it ran ${[...ran.keys()].join(', ')}`,
  );
  const typeCheckedOnly = typescript.filter((name) => !ran.has(name));
  const notRunAtAll = examples.filter((name) => name.endsWith('.sh') && !ran.has(name));
  return [
    `ran ${ran.size} examples (${perPackage(ran.keys())}) on the packed packages with their tests' outcomes`,
    `core/lambda.ts: ${ran.get('core/lambda.ts')}`,
    `type-checked only: ${perPackage(typeCheckedOnly)}`,
    ...(notRunAtAll.length > 0 ? [`neither compiled nor run: ${notRunAtAll.join(', ')}`] : []),
  ].join('; ');
}
