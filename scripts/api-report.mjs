#!/usr/bin/env node
// The public API of every published entry point, recorded in a checked-in report
// (packages/<pkg>/api/<entry>.api.md) so that a change to what users can import shows up in review.
// API Extractor reads the built ES module declarations (dist/*.d.ts); one config per entry point,
// packages/<pkg>/api/<entry>.api-extractor.json, each extending scripts/api-extractor.base.json.
//
//   node scripts/api-report.mjs                  check every package: fails when a report differs
//                                                from dist/, or an `exports` entry has no config
//   node scripts/api-report.mjs --update         write the reports (pnpm api:update builds first)
//   node scripts/api-report.mjs --package DIR    only the package in DIR (turbo's `api` task)
//
// Entry names: `.` is <short>, `./store` is <short>-store (packages/core/api/core-store.api.md).
//
// About the API Extractor here: the pinned @microsoft/api-extractor 8.0.0 is, by its changelog,
// a February 2019 release; the maintained line is 7.x despite the numbers. It has no
// `Extractor.invoke` (its Node API is `new Extractor(config).processProject()`), no message ids
// (ae-forgotten-export …), writes `<package>.api.ts` review text, and bundles TypeScript 3.1,
// whose parser cannot read what TypeScript 5.9 emits (`import type`, `export type {}`,
// `export { type X }`, `readonly T[]`, accessors, `asserts`): it stops with "Symbol not found for
// identifier: LeaseState". No config setting changes the parser, so this script makes API
// Extractor load the workspace's TypeScript (the one that wrote the declarations) and supplies the
// one compiler internal it calls that TypeScript 5 no longer has (ts.getResolvedModule). It then
// checks that the report names exactly the exports TypeScript itself sees, so a misreading cannot
// pass. With a current 7.x API Extractor (Extractor.invoke, .api.md, its own TypeScript 5) these
// shims and the wrapping below go away.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import Module, { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const root = new URL('..', import.meta.url).pathname;
const require = createRequire(join(root, 'package.json'));

const { values: flags } = parseArgs({
  options: {
    update: { type: 'boolean', default: false },
    package: { type: 'string' },
  },
});

// --- API Extractor on the workspace's TypeScript --------------------------------------------
const typescriptPath = require.resolve('typescript');
const ts = require(typescriptPath);
const extractorDir = dirname(require.resolve('@microsoft/api-extractor/package.json'));
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (request === 'typescript' && parent?.filename?.startsWith(extractorDir)) return typescriptPath;
  return resolveFilename.call(this, request, parent, ...rest);
};
const { Extractor } = require('@microsoft/api-extractor');
const internal = (path) => require(join(extractorDir, 'lib', path));
const { TypeScriptInternals } = internal('analyzer/TypeScriptInternals');
const { ReviewFileGenerator } = internal('generators/ReviewFileGenerator');
const { AstSymbol } = internal('analyzer/AstSymbol');
const seenTs = createRequire(join(extractorDir, 'lib', 'index.js'))('typescript').version;
if (seenTs !== ts.version) {
  console.error(`api-report: API Extractor loads TypeScript ${seenTs}, expected ${ts.version}`);
  process.exit(2);
}

/** The program of the run in progress (for the module resolutions TypeScript 5 keeps on it). */
let currentProgram;
TypeScriptInternals.getResolvedModule = (sourceFile, moduleName) => {
  const modes = [sourceFile.impliedNodeFormat, ts.ModuleKind.ESNext, ts.ModuleKind.CommonJS, undefined];
  for (const mode of modes) {
    const found = currentProgram.getResolvedModule(sourceFile, moduleName, mode)?.resolvedModule;
    if (found) return found;
  }
  return undefined;
};

/** What the last run saw: the report text, the exported names, the forgotten exports. */
let captured;
const generateReviewFileContent = ReviewFileGenerator.generateReviewFileContent;
ReviewFileGenerator.generateReviewFileContent = (collector) => {
  const text = generateReviewFileContent.call(ReviewFileGenerator, collector);
  const exported = new Set();
  const forgotten = new Set();
  for (const entity of collector.entities) {
    if (entity.exported) for (const name of entity.exportNames) exported.add(name);
    else if (entity.astEntity instanceof AstSymbol && !entity.astEntity.isExternal) {
      forgotten.add(entity.nameForEmit);
    }
  }
  const checker = collector.typeChecker;
  const moduleSymbol = checker.getSymbolAtLocation(collector.workingPackage.entryPointSourceFile);
  const tsExports = new Set(moduleSymbol ? checker.getExportsOfModule(moduleSymbol).map((s) => s.name) : []);
  captured = { text, exported, tsExports, forgotten };
  return text;
};

// --- Packages, entry points, configs --------------------------------------------------------
const problems = [];
const updated = [];
let upToDate = 0;
const scratch = mkdtempSync(join(tmpdir(), 'latch-api-report-'));
const began = Date.now();
try {
  const packageDirs = flags.package
    ? [resolve(flags.package)]
    : readdirSync(join(root, 'packages'))
        .sort()
        .map((name) => join(root, 'packages', name));
  for (const dir of packageDirs) {
    if (!existsSync(join(dir, 'package.json'))) continue;
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    if (manifest.private) continue;
    reportPackage(dir, manifest);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

const took = `${((Date.now() - began) / 1000).toFixed(1)} s`;
if (problems.length > 0) {
  for (const problem of problems) console.error(`api-report: ${problem}`);
  if (!flags.update) {
    console.error(
      'api-report: if the API change is intended, run `pnpm api:update` and commit the api/*.api.md ' +
        'files (the reviewer sees the diff).',
    );
  }
  process.exit(1);
}
console.log(
  flags.update
    ? `api-report: ${updated.length} report(s) written, ${upToDate} already up to date (${took})`
    : `api-report: ${upToDate} report(s) up to date (${took})`,
);

/** Every `exports` entry of the package against its config and its report. */
function reportPackage(dir, manifest) {
  const short = basename(dir);
  const apiDir = join(dir, 'api');
  const configs = new Map(); // entry .d.ts (package-relative) -> config file
  for (const file of existsSync(apiDir) ? readdirSync(apiDir).sort() : []) {
    if (!file.endsWith('.api-extractor.json')) continue;
    const path = join(apiDir, file);
    let config;
    try {
      config = Extractor.loadConfigObject(path);
    } catch (error) {
      problems.push(`${manifest.name}: ${rel(path)} is not a valid API Extractor config: ${error.message}`);
      continue;
    }
    configs.set(normalize(config.project.entryPointSourceFile), { path, config });
  }

  const expectedReports = new Set();
  for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
    const types = target?.import?.types;
    if (typeof types !== 'string' || !types.endsWith('.d.ts')) continue; // ./package.json
    const entryName = subpath === '.' ? short : `${short}-${subpath.slice(2).replaceAll('/', '-')}`;
    const specifier = subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`;
    const entry = normalize(types);
    const found = configs.get(entry);
    if (!found) {
      problems.push(
        `${specifier}: package.json exports "${subpath}" (${entry}) has no API Extractor config. Add ` +
          `${rel(join(apiDir, `${entryName}.api-extractor.json`))} (copy a sibling config and set its ` +
          'entry point), then run `pnpm api:update`.',
      );
      continue;
    }
    configs.delete(entry);
    const expectedConfig = `${entryName}.api-extractor.json`;
    if (basename(found.path) !== expectedConfig) {
      problems.push(
        `${specifier}: rename ${rel(found.path)} to ${expectedConfig} (entry names follow the subpath)`,
      );
      continue;
    }
    const reportPath = join(apiDir, `${entryName}.api.md`);
    expectedReports.add(basename(reportPath));
    reportEntry({
      dir,
      specifier,
      entry,
      configPath: found.path,
      config: found.config,
      reportPath,
    });
  }
  for (const [entry, { path }] of configs) {
    problems.push(
      `${manifest.name}: ${rel(path)} reads ${entry}, which package.json exports no longer points at; delete it.`,
    );
  }
  for (const file of existsSync(apiDir) ? readdirSync(apiDir) : []) {
    if (!file.endsWith('.api.md') || expectedReports.has(file)) continue;
    if (flags.update) {
      unlinkSync(join(apiDir, file));
      console.log(`api-report: deleted ${rel(join(apiDir, file))} (no exports entry produces it any more)`);
    } else {
      problems.push(`${manifest.name}: ${rel(join(apiDir, file))} belongs to no exports entry; delete it.`);
    }
  }
}

/** Runs API Extractor on one entry point and compares (or writes) its report. */
function reportEntry({ dir, specifier, entry, configPath, config, reportPath }) {
  if (!existsSync(join(dir, entry))) {
    problems.push(`${specifier}: ${rel(join(dir, entry))} does not exist; build first (pnpm build).`);
    return;
  }
  // Paths in a config are relative to the config file's folder (API Extractor 8 would take
  // them relative to the working directory). The review text goes to a scratch folder: this
  // script names, compares and writes the checked-in .api.md itself (API Extractor 8 can only
  // name a report after the package, and a package has several entry points here).
  const rootFolder = resolve(dirname(configPath), config.compiler.rootFolder ?? '.');
  const reviewFolder = join(scratch, basename(reportPath, '.api.md'));
  const messages = [];
  const logger = {
    logVerbose: () => {},
    logInfo: () => {},
    logWarning: (message) => messages.push(`warning: ${message}`),
    logError: (message) => messages.push(`error: ${message}`),
  };
  captured = undefined;
  let ok;
  try {
    const extractor = new Extractor(
      {
        ...config,
        compiler: { ...config.compiler, rootFolder },
        apiReviewFile: { enabled: true, apiReviewFolder: reviewFolder, tempFolder: reviewFolder },
      },
      { localBuild: true, customLogger: logger },
    );
    currentProgram = extractor._program;
    ok = extractor.processProject();
  } catch (error) {
    problems.push(`${specifier}: API Extractor failed on ${entry}: ${error.stack ?? error}`);
    return;
  }
  if (!ok || !captured || messages.some((m) => m.startsWith('error'))) {
    problems.push(
      `${specifier}: API Extractor reported problems on ${entry}:\n    ${messages.join('\n    ') || '(none printed)'}`,
    );
    return;
  }
  for (const message of messages) console.log(`api-report: ${specifier}: ${message}`);

  // The shims above must not change what is seen: the report names exactly TypeScript's exports.
  const missing = [...captured.tsExports].filter((name) => !captured.exported.has(name));
  const extra = [...captured.exported].filter((name) => !captured.tsExports.has(name));
  if (missing.length > 0 || extra.length > 0) {
    problems.push(
      `${specifier}: API Extractor's exports differ from TypeScript's for ${entry}` +
        `${missing.length > 0 ? `; missing ${missing.join(', ')}` : ''}` +
        `${extra.length > 0 ? `; extra ${extra.join(', ')}` : ''}`,
    );
    return;
  }

  const report = formatLikeBiome(reportPath, renderReport({ specifier, entry, captured }));
  if (report === undefined) return;
  const current = existsSync(reportPath) ? readFileSync(reportPath, 'utf8') : undefined;
  if (current === report) {
    upToDate += 1;
  } else if (flags.update) {
    writeFileSync(reportPath, report);
    updated.push(reportPath);
    console.log(`api-report: wrote ${rel(reportPath)}`);
  } else if (current === undefined) {
    problems.push(`${specifier}: no report yet at ${rel(reportPath)}; run \`pnpm api:update\`.`);
  } else {
    problems.push(
      `${specifier}: the public API in ${entry} differs from ${rel(reportPath)}:\n${diff(current, report)}`,
    );
  }
}

/**
 * The checked-in report: API Extractor's review text in a TypeScript block, then the forgotten
 * exports. A forgotten export (a type the API mentions that the entry point does not export,
 * so a user cannot name it) is listed rather than failing the run: some are deliberate (the
 * store-author types that `@latch/core` leaves to `@latch/core/store`, opaque internals behind
 * `LeaseStrategy`), and the list makes each one, and each new one, visible in review. Missing
 * release tags (@public/@beta) are allowed (validationRules in the base config): Latch does not
 * use release tags, so that check would only be noise.
 */
function renderReport({ specifier, entry, captured }) {
  const body = captured.text.replace(/\r\n/g, '\n').trimEnd();
  const lines = [
    `# API report: \`${specifier}\``,
    '',
    `Generated from \`${entry}\` by API Extractor (\`pnpm api:update\`); do not edit by hand.`,
    `A diff in this file is a change to what users of \`${specifier}\` can import: review it.`,
    '',
    '```ts',
    body,
    '```',
    '',
    '## Referenced but not exported',
    '',
  ];
  const forgotten = [...captured.forgotten].sort((a, b) => a.localeCompare(b));
  if (forgotten.length === 0) {
    lines.push('None: every type this API mentions is exported by it.');
  } else {
    lines.push(
      `Types the API above mentions that \`${specifier}\` does not export, so users cannot name them`,
      'from here (API Extractor 7 calls this ae-forgotten-export):',
      '',
    );
    // Names only: where a type lives inside the package is not part of the API.
    for (const name of forgotten) lines.push(`- \`${name}\``);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The report as Biome formats it (Biome formats the TypeScript block of a Markdown file too), so
 * that `pnpm lint` accepts the checked-in reports and `pnpm format` leaves them as generated.
 */
function formatLikeBiome(reportPath, text) {
  const biome = spawnSync(
    join(root, 'node_modules', '.bin', 'biome'),
    ['format', `--stdin-file-path=${reportPath}`],
    {
      cwd: root,
      input: text,
      encoding: 'utf8',
    },
  );
  if (biome.status !== 0 || !biome.stdout) {
    problems.push(`${rel(reportPath)}: biome format failed (exit ${biome.status}): ${biome.stderr.trim()}`);
    return undefined;
  }
  return biome.stdout;
}

/**
 * The changed lines for the failure message: `-` lines of the checked-in report and `+` lines of
 * the one the declarations give now, each with its line number in its own file.
 */
function diff(before, after) {
  const a = before.split('\n');
  const b = after.split('\n');
  // Longest common subsequence table over lines; the reports are small.
  const lcs = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i += 1;
      j += 1;
    } else if (j < b.length && (i === a.length || lcs[i][j + 1] >= lcs[i + 1][j])) {
      out.push(`    + ${String(j + 1).padStart(4)}| ${b[j]}`);
      j += 1;
    } else {
      out.push(`    - ${String(i + 1).padStart(4)}| ${a[i]}`);
      i += 1;
    }
  }
  const limit = 40;
  return out.length > limit
    ? [...out.slice(0, limit), `    … ${out.length - limit} more lines`].join('\n')
    : out.join('\n');
}

function normalize(path) {
  return path.replace(/^\.\//, '').replaceAll('\\', '/');
}

function rel(path) {
  return relative(root, path) || '.';
}
