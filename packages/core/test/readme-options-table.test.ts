import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_OPTION_KEYS } from '../src/client/lock-options.js';

// A Markdown table ends at the first line that is not a row: a paragraph inside it turns every
// later row into plain text. The README's option table must be one table with every option.

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The lines of a `### heading` section, up to the next heading. */
function section(heading: string): string[] {
  const lines = readme.split('\n');
  const start = lines.indexOf(heading);
  if (start === -1) throw new Error(`README has no "${heading}" section`);
  const end = lines.findIndex((line, i) => i > start && /^#{1,3} /.test(line));
  return lines.slice(start + 1, end === -1 ? undefined : end);
}

describe('the README table of `new LockClient(options)`', () => {
  const lines = section('### `new LockClient(options)`');
  const first = lines.findIndex((line) => line.startsWith('|'));
  const afterTable = lines.findIndex((line, i) => i > first && !line.startsWith('|'));
  const table = lines.slice(first, afterTable === -1 ? undefined : afterTable);

  it('is one table: no row of it comes after a line that is not a row', () => {
    expect(first).toBeGreaterThan(-1);
    const strayRows = lines.slice(first + table.length).filter((line) => line.startsWith('|'));
    expect(strayRows).toEqual([]);
  });

  it('has one row for every option of the constructor', () => {
    const options = table.slice(2).map((row) => /^\|\s*`(\w+)`/.exec(row)?.[1]);
    expect(options.sort()).toEqual([...CLIENT_OPTION_KEYS].sort());
  });
});
