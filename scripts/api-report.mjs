#!/usr/bin/env node
// The public API of every published entry point, recorded in a checked-in report
// (packages/<pkg>/api/<entry>.api.md) so that a change to what users can import shows up in review.
// API Extractor 7 reads the built ES module declarations (dist/*.d.ts); one config per entry point,
// packages/<pkg>/api/<entry>.api-extractor.json, each extending scripts/api-extractor.base.json.
//
//   node scripts/api-report.mjs                  check every package: fails when a report differs
//                                                from dist/, or an `exports` entry has no config
//   node scripts/api-report.mjs --update         write the reports (pnpm api:update builds first)
//   node scripts/api-report.mjs --package DIR    only the package in DIR (turbo's `api` task)
//
// Entry names: `.` is <short>, `./store` is <short>-store (packages/core/api/core-store.api.md).
//
// The reports are API Extractor's own .api.md, compared and written by API Extractor (check mode is
// `localBuild: false`, --update is `localBuild: true`); its scratch copy goes to
// packages/<pkg>/.cache/api-extractor/ (git-ignored). Biome leaves the reports alone (biome.json
// excludes them) so that what is checked in is exactly what API Extractor writes.
//
// Messages (scripts/api-extractor.base.json):
// - ae-missing-release-tag: off. Latch does not use release tags (@public, @beta …).
// - ae-forgotten-export (a type the API mentions that the entry point does not export, so users
//   cannot name it) and ae-unresolved-link ({@link X} to something the entry does not export):
//   written into the report next to the declaration, not failures. Some are deliberate (store-author
//   types that `@latch/core` leaves to `@latch/core/store`); the report makes each one, and each new
//   one, visible in review.
// - tsdoc-*: off. Our doc comments are informal TSDoc (`@latch/core` in prose, `{ … }` in text).
// - Everything else (compiler messages, other ae-* warnings and errors): printed, and the run fails.
//
// API Extractor names the exports from the TypeScript checker's own export list of the entry point,
// so no cross-check against TypeScript is needed here.
import { existsSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  ConsoleMessageId,
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  ExtractorMessageCategory,
} from '@microsoft/api-extractor';

const root = new URL('..', import.meta.url).pathname;

const { values: flags } = parseArgs({
  options: {
    update: { type: 'boolean', default: false },
    package: { type: 'string' },
  },
});

const problems = [];
const updated = [];
let upToDate = 0;
const began = Date.now();

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

const took = `${((Date.now() - began) / 1000).toFixed(1)} s`;
if (problems.length > 0) {
  for (const problem of problems) console.error(`api-report: ${problem}`);
  process.exit(1);
}
console.log(
  flags.update
    ? `api-report: ${updated.length} report(s) written, ${upToDate} already up to date ` +
        `(API Extractor ${Extractor.version}, ${took})`
    : `api-report: ${upToDate} report(s) up to date (API Extractor ${Extractor.version}, ${took})`,
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
      // loadFile + prepare rather than loadFileAndPrepare: a missing dist/ file should get the
      // "build first" message below, not an exception from prepare.
      config = ExtractorConfig.prepare({
        configObject: ExtractorConfig.loadFile(path),
        configObjectFullPath: path,
        packageJsonFullPath: join(dir, 'package.json'),
        ignoreMissingEntryPoint: true,
      });
    } catch (error) {
      problems.push(`${manifest.name}: ${rel(path)} is not a valid API Extractor config: ${error.message}`);
      continue;
    }
    configs.set(normalize(relative(dir, config.mainEntryPointFilePath)), { path, config });
  }

  const expectedReports = new Set();
  for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
    const types = target?.import?.types;
    if (typeof types !== 'string' || !types.endsWith('.d.ts')) continue; // ./package.json
    const entryName = subpath === '.' ? short : `${short}-${subpath.slice(2).replaceAll('/', '-')}`;
    const label = `${manifest.name} entry "${subpath}"`;
    const entry = normalize(types);
    const reportPath = join(apiDir, `${entryName}.api.md`);
    expectedReports.add(basename(reportPath));
    const found = configs.get(entry);
    if (!found) {
      problems.push(
        `${label} (${entry}) has no API Extractor config. Add ` +
          `${rel(join(apiDir, `${entryName}.api-extractor.json`))} (copy a sibling config and set its ` +
          'entry point and reportFileName), then run `pnpm api:update`.',
      );
      continue;
    }
    configs.delete(entry);
    const { path: configPath, config } = found;
    const expectedConfig = `${entryName}.api-extractor.json`;
    if (basename(configPath) !== expectedConfig) {
      problems.push(
        `${label}: rename ${rel(configPath)} to ${expectedConfig} (entry names follow the subpath)`,
      );
      continue;
    }
    const configuredReport = join(config.reportFolder, config.reportConfigs[0]?.fileName ?? '');
    if (resolve(config.projectFolder) !== dir || configuredReport !== reportPath) {
      problems.push(
        `${label}: ${rel(configPath)} must have projectFolder ".." and write ${rel(reportPath)} ` +
          `(reportFileName "${entryName}"); it writes ${rel(configuredReport)}`,
      );
      continue;
    }
    reportEntry({ label, entry, config, reportPath });
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

/** Runs API Extractor on one entry point: it compares (check) or writes (--update) the report. */
function reportEntry({ label, entry, config, reportPath }) {
  if (!existsSync(config.mainEntryPointFilePath)) {
    problems.push(
      `${label}: ${rel(config.mainEntryPointFilePath)} does not exist; build first (pnpm build).`,
    );
    return;
  }
  const hadReport = existsSync(reportPath);
  const reported = []; // warnings and errors, printed with the entry's name
  let reportDiff;
  let result;
  try {
    result = Extractor.invoke(config, {
      localBuild: flags.update,
      printApiReportDiff: !flags.update,
      messageCallback(message) {
        // This script prints what matters, once, under the entry's name; the rest (progress,
        // "report copied", the bundled TypeScript version) is dropped.
        message.handled = true;
        if (message.category === ExtractorMessageCategory.Console) {
          switch (message.messageId) {
            case ConsoleMessageId.ApiReportDiff:
              reportDiff = message.text.replace(/^Changes to the API report:\s*/, '');
              return;
            case ConsoleMessageId.ApiReportNotCopied:
            case ConsoleMessageId.ApiReportCopied:
            case ConsoleMessageId.ApiReportCreated:
              return; // result.apiReportChanged says the same
          }
        }
        if (message.logLevel === ExtractorLogLevel.Error || message.logLevel === ExtractorLogLevel.Warning) {
          const text =
            message.category === ExtractorMessageCategory.Console
              ? message.text
              : message.formatMessageWithLocation(root);
          reported.push(`${message.logLevel}: ${text}`);
        }
      },
    });
  } catch (error) {
    problems.push(`${label}: API Extractor failed on ${entry}: ${error.stack ?? error}`);
    return;
  }
  if (reported.length > 0) {
    problems.push(`${label}: API Extractor reported on ${entry}:\n    ${reported.join('\n    ')}`);
  } else if (!result.succeeded && !result.apiReportChanged) {
    problems.push(
      `${label}: API Extractor failed on ${entry} (${result.errorCount} error(s), nothing printed)`,
    );
  }

  if (!result.apiReportChanged) {
    upToDate += 1;
  } else if (flags.update) {
    updated.push(reportPath);
    console.log(`api-report: ${hadReport ? 'updated' : 'created'} ${rel(reportPath)}`);
  } else if (!hadReport) {
    problems.push(`${label}: no report yet at ${rel(reportPath)}; run \`pnpm api:update\` and commit it.`);
  } else {
    problems.push(
      `${label}: the public API in ${entry} differs from ${rel(reportPath)}. If the change is ` +
        'intended, run `pnpm api:update` and commit the report (the reviewer sees the diff).\n' +
        indent(reportDiff ?? `(compare with ${rel(join(config.reportTempFolder, basename(reportPath)))})`),
    );
  }
}

/** The unified diff from API Extractor, indented, and cut short when it is long. */
function indent(text) {
  const lines = text.trimEnd().split('\n');
  const limit = 60;
  const shown =
    lines.length > limit ? [...lines.slice(0, limit), `… ${lines.length - limit} more lines`] : lines;
  return shown.map((line) => `    ${line}`).join('\n');
}

function normalize(path) {
  return path.replace(/^\.\//, '').replaceAll('\\', '/');
}

function rel(path) {
  return relative(root, path) || '.';
}
