import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchResults } from '../results.js';
import { renderChart } from './chart-svg.js';

/** Writes `latest.json` and `chart.svg` into `dir`; returns their paths. */
export async function writeResults(
  results: BenchResults,
  dir: string,
): Promise<{ json: string; chart: string }> {
  await mkdir(dir, { recursive: true });
  const json = join(dir, 'latest.json');
  const chart = join(dir, 'chart.svg');
  await writeFile(json, `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(chart, renderChart(results));
  return { json, chart };
}
