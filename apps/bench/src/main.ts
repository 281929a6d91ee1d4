import { fileURLToPath } from 'node:url';
import { parseCliOptions, USAGE } from './cli-options.js';
import { formatReport } from './report/format-report.js';
import { writeResults } from './report/write-results.js';
import { runBench } from './run-bench.js';
import { QUIET_SDK_ENV } from './run-workers.js';
import { subjectInfo } from './subjects/catalog.js';

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
  log: (line) => console.error(`[${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${line}`),
});
console.log(formatReport(results));
const out = options.out ?? fileURLToPath(new URL('../results/', import.meta.url));
const written = await writeResults(results, out);
console.log(`\nWrote ${written.json} and ${written.chart}`);

// A crashed run, or an overlap in Latch itself, fails the bench: a fast wrong result must not pass.
const rows = Object.values(results.scenarios).flat();
const failed = rows.filter((row) => row.status === 'failed');
const ourOverlaps = rows.filter((row) => row.status === 'invalid' && subjectInfo(row.subject).ours);
const peerOverlaps = rows.filter((row) => row.status === 'invalid' && !subjectInfo(row.subject).ours);
for (const row of peerOverlaps) console.error(`WARNING: ${row.subject} overlapped: ${row.note}`);
if (failed.length > 0 || ourOverlaps.length > 0) {
  for (const row of [...failed, ...ourOverlaps])
    console.error(`FAILED: ${row.subject}: ${row.status}: ${row.note}`);
  process.exit(1);
}
process.exit(0);
