import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const source = (path: string) => readFileSync(new URL(`../src/${path}`, import.meta.url), 'utf8').trim();

// The README shows the adapter code the demo runs (and the end-to-end tests exercise), verbatim.
describe('README', () => {
  test.each([
    'replica/charge-route.ts',
    'replica/nightly-report.service.ts',
    'replica/customer-sync-worker.ts',
    'replica/export-route.ts',
  ])('shows %s exactly as it runs', (path) => {
    expect(readme).toContain(source(path));
  });

  test('starts with the one command', () => {
    expect(readme).toMatch(/```sh\npnpm demo\n```/);
  });
});
