import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

// The layers of core (ARCHITECTURE.md) and what each may import. A lower layer never imports a
// higher one, so each can be read, tested and replaced without those above it. Cycles are
// refused by `pnpm lint` (dpdm); this checks the direction.
const MAY_IMPORT: Record<string, readonly string[]> = {
  // The lease protocol of one writer as a pure function: no I/O, no clocks, nothing below it.
  protocol: ['protocol'],
  shared: ['shared'],
  contract: ['contract', 'shared'],
  engine: ['engine', 'protocol', 'verify', 'contract', 'shared'],
  waiting: ['waiting', 'engine', 'contract', 'shared'],
  client: ['client', 'waiting', 'telemetry', 'engine', 'verify', 'contract', 'shared'],
  // verifyStore: probes a store through its contract, before a client trusts it.
  verify: ['verify', 'contract', 'shared'],
  // OpenTelemetry spans and metrics: fed by the client's events and a store decorator.
  telemetry: ['telemetry', 'contract', 'shared'],
  // Backend adapters implement the store contract; the list strategy's store builds its engine.
  stores: ['stores', 'engine', 'verify', 'contract', 'shared'],
  http: ['http', 'shared'],
};

const src = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** The layer of a source file: its top folder under src (entry points at the top have none). */
const layerOf = (file: string) => {
  const parts = relative(src, file).split(/[\\/]/);
  return parts.length > 1 ? parts[0]! : undefined;
};

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((match) =>
    normalize(join(dirname(file), match[1]!)),
  );
}

test('every layer imports only itself and the layers below it', () => {
  const wrong: string[] = [];
  const files = sourceFiles(src);
  for (const file of files) {
    const layer = layerOf(file);
    if (layer === undefined) continue; // entry points (index, store, http) gather from any layer
    const allowed = MAY_IMPORT[layer];
    expect(allowed, `a layer for ${relative(src, file)} in MAY_IMPORT`).toBeDefined();
    for (const target of importsOf(file)) {
      const targetLayer = layerOf(target);
      if (targetLayer === undefined || !allowed!.includes(targetLayer)) {
        wrong.push(`${relative(src, file)} imports ${relative(src, target)}`);
      }
    }
  }
  expect(files.length).toBeGreaterThan(30);
  expect(wrong).toEqual([]);
});
