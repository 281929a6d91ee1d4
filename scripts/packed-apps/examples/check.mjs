// The README examples as a user meets them: every TypeScript example of every package
// (packages/*/examples/*.ts, read when the run starts, so a new one is picked up with no change
// here) is copied into an app that installs all the packed packages, and type-checked by the
// app's tsc with skipLibCheck: false. Then, on the recommended Node line, main.ts runs core's
// examples against the S3 server and DynamoDB Local from the packed @latch/testing, expecting
// what core's own tests expect of each, the Serverless section's Lambda handler included.
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { RECOMMENDED_NODE_MAJOR } from '../../node-lines.mjs';
import { expect, run } from '../lib.mjs';

const here = new URL('./', import.meta.url);
const packagesDir = new URL('../../../packages/', import.meta.url);

/** Every package's TypeScript examples, as [source, target in the app]. */
function exampleSources() {
  const sources = [];
  for (const pkg of readdirSync(packagesDir, { withFileTypes: true })) {
    if (!pkg.isDirectory()) continue;
    let files;
    try {
      files = readdirSync(new URL(`${pkg.name}/examples/`, packagesDir));
    } catch {
      continue; // a package without examples
    }
    for (const file of files.filter((name) => name.endsWith('.ts')).sort()) {
      sources.push([
        new URL(`${pkg.name}/examples/${file}`, packagesDir),
        `src/examples/${pkg.name}/${file}`,
      ]);
    }
  }
  return sources;
}

const examples = exampleSources();
/** How many examples each package has, by package folder. */
const countByPackage = {};
for (const [, target] of examples) {
  const pkg = target.split('/')[2];
  countByPackage[pkg] = (countByPackage[pkg] ?? 0) + 1;
}
const coreExamples = examples
  .filter(([, target]) => target.startsWith('src/examples/core/'))
  .map(([, target]) => target.split('/').pop());

/**
 * Core's examples main.ts must have run, whatever it plans: those its README's sections show
 * (the Serverless section's lambda.ts among them) and core's tests run.
 */
const MUST_RUN = [
  'quick-start.ts',
  's3-deploy-lock.ts',
  'dynamodb-invoice.ts',
  'lambda.ts',
  'transfer.ts',
  'export-limit.ts',
  'handoff.ts',
  'leader-election.ts',
  's3-list-lock.ts',
  'telemetry.ts',
];

export const examplesApp = {
  name: 'examples',
  template: here,
  files: ['package.json', 'tsconfig.json'],
  sources: [[new URL('main.ts', here), 'src/main.ts'], ...examples],
  tarballs: ['core', 'express', 'nest', 'bullmq', 'cli', 'testing'],
  compile: [
    {
      project: 'tsconfig.json',
      label:
        `examples: ${examples.length} README examples (` +
        Object.entries(countByPackage)
          .map(([pkg, count]) => `${pkg} ${count}`)
          .join(', ') +
        ') with skipLibCheck: false, nodenext, the packages as installed',
    },
  ],
  // Compiled once, and what it runs does not differ between lines: the other apps cover those.
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
        const [file, ...rest] = l.slice('RAN '.length).split(': ');
        return [file, rest.join(': ')];
      }),
  );
  expect(
    result.code === 0 && failed.length === 0,
    `dist/main.js exited ${result.code}${result.timedOut ? ' (timed out)' : ''} on node ${line.major}:\n    ` +
      [...failed, ...result.stderr.trim().split('\n').slice(-10)].slice(0, 40).join('\n    '),
  );
  const notRun = MUST_RUN.filter((file) => !ran.has(file));
  expect(
    notRun.length === 0,
    `dist/main.js did not run ${notRun.join(', ')}; it ran ${[...ran.keys()].join(', ')}`,
  );
  const compiledOnly = coreExamples.filter((file) => !ran.has(file));
  return (
    `ran ${ran.size} of core's ${coreExamples.length} examples on the packed packages with their tests' ` +
    `outcomes (${[...ran.keys()].join(', ')}); lambda.ts: ${ran.get('lambda.ts')}` +
    (compiledOnly.length > 0 ? `; type-checked only: ${compiledOnly.join(', ')}` : '')
  );
}
