import { fileURLToPath } from 'node:url';
import { parseCliOptions, USAGE } from './cli-options.js';
import { formatReport } from './report/format-report.js';
import { writeResults } from './report/write-results.js';
import { runBench } from './run-bench.js';
import { QUIET_SDK_ENV } from './run-workers.js';
import { judgeRun } from './verdict.js';

// `pnpm bench`: runs every scenario, prints one table per scenario, writes the results.
Object.assign(process.env, QUIET_SDK_ENV);

let options: ReturnType<typeof parseCliOptions>;
try {
  options = parseCliOptions(process.argv.slice(2));
} catch (error) {
  console.error(`${(error as Error).message}\n\n${USAGE}`);
  process.exit(2);
}
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}

const started = Date.now();
const results = await runBench({
  quick: options.quick,
  scenarios: options.scenarios,
  subjects: options.subjects,
  latency: options.latency,
  latencySeed: options.latencySeed,
  log: (line) => console.error(`[${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${line}`),
});
console.log(formatReport(results));
const out = options.out ?? fileURLToPath(new URL('../results/', import.meta.url));
const written = await writeResults(results, out);
console.log(`\nWrote ${written.json} and ${written.chart}`);

// A crashed run, or Latch itself invalid (an overlap, a semaphore over its limit), fails the bench.
const verdict = judgeRun(results);
for (const row of verdict.peerInvalid) console.error(`WARNING: ${row.subject} was invalid: ${row.note}`);
if (verdict.failures.length > 0) {
  for (const row of verdict.failures) console.error(`FAILED: ${row.subject}: ${row.status}: ${row.note}`);
  process.exit(1);
}
process.exit(0);
