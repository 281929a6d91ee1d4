/**
 * `require` from where @latch/core is installed, for optional peers that must load
 * synchronously; it throws when there is none to be had. The CommonJS build compiles
 * own-require.cjs.ts in its place (scripts/build-package.mjs).
 *
 * Made on first use, never while this module loads: a bundle of this ES module build may have
 * no `import.meta.url` (esbuild's CommonJS output turns `import.meta` into `{}`), and a module
 * that throws at load takes a whole bundle down at cold start, where telemetry could simply
 * have looked elsewhere (otel-api.ts). No import of node:module either: the banner bundling
 * guides give an ES module bundle declares its own `createRequire`, and a named import hoisted
 * next to it would be a second declaration.
 */
export function ownRequire(id: string): unknown {
  own ??= makeOwnRequire();
  if (own === null) throw new Error(`Cannot load ${id}: no require() for @latch/core's location here.`);
  return own(id);
}

/** Not made yet, made, or none to be had here (then never tried again). */
let own: NodeJS.Require | null | undefined;

function makeOwnRequire(): NodeJS.Require | null {
  const nodeModule = globalThis.process?.getBuiltinModule?.('node:module');
  if (!nodeModule) return null; // not Node, or a Node without getBuiltinModule
  // undefined at run time in a CommonJS bundle, whatever its type says
  const url: string | undefined = import.meta.url;
  // In a CommonJS bundle, the bundle's own file is where a require would resolve from.
  const from = typeof url === 'string' ? url : typeof __filename === 'string' ? __filename : undefined;
  if (from === undefined) return null;
  try {
    return nodeModule.createRequire(from);
  } catch {
    return null; // not a file URL or path (a bundler put something else there)
  }
}
