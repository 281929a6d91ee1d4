import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';

// @latch/testing's README shows this store and its test as a store author's starting point.
const readme = readFileSync(new URL('../../../testing/README.md', import.meta.url), 'utf8');
const file = (name: string) => readFileSync(new URL(name, import.meta.url), 'utf8').trim();

test.each(['map-store.ts', 'map-store.test.ts'])(
  'the @latch/testing README shows %s exactly as tested',
  (name) => {
    expect(readme).toContain(file(name));
  },
);
