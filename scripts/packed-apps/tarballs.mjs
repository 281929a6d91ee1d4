// The published packages as npm would get them: `pnpm build`, `pnpm pack` of every public
// packages/* folder (pnpm turns workspace:* into real versions), and the checks on each
// tarball: its files, its README's links, publint and attw.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanEnv, expect, run } from './lib.mjs';

export const root = new URL('../../', import.meta.url).pathname;
const bin = (name) => join(root, 'node_modules', '.bin', name);

/** `pnpm build` at the root (turbo). Resolves with a detail line; throws with the log's tail. */
export async function build() {
  const result = await run('pnpm', ['build'], {
    cwd: root,
    env: cleanEnv({ TURBO_TELEMETRY_DISABLED: '1' }),
    timeoutMs: 600_000,
  });
  const output = `${result.stdout}\n${result.stderr}`;
  expect(result.code === 0, `pnpm build exited ${result.code}:\n    ${lastLines(output, 20)}`);
  const cached = /Cached:\s+(\d+) cached, (\d+) total/.exec(output);
  return `pnpm build (turbo) in ${(result.ms / 1000).toFixed(1)} s${cached ? `, ${cached[1]}/${cached[2]} tasks cached` : ''}`;
}

/** The public packages under packages/: `{ short, name, version, dir }`, by folder name. */
export function publishedPackages() {
  const dirs = readdirSync(join(root, 'packages')).sort();
  const packages = [];
  for (const short of dirs) {
    const dir = join(root, 'packages', short);
    let manifest;
    try {
      manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    if (manifest.private) continue;
    packages.push({ short, name: manifest.name, version: manifest.version, dir });
  }
  return packages;
}

/** `pnpm pack --pack-destination dest` in the package's folder; sets `pkg.tarball`. */
export async function pack(pkg, dest) {
  const result = await run('pnpm', ['pack', '--pack-destination', dest], { cwd: pkg.dir, env: cleanEnv() });
  expect(
    result.code === 0,
    `pnpm pack exited ${result.code}: ${lastLines(result.stderr || result.stdout, 8)}`,
  );
  const path = result.stdout.trim().split('\n').pop().trim();
  expect(path.endsWith('.tgz'), `pnpm pack printed no tarball path: ${lastLines(result.stdout, 4)}`);
  pkg.tarball = path;
  return path;
}

/** Unpacks the tarball into `into/<short>/package` and checks what a published package needs. */
export async function checkContents(pkg, into) {
  const target = join(into, pkg.short);
  mkdirSync(target, { recursive: true });
  const untar = await run('tar', ['-xzf', pkg.tarball, '-C', target]);
  expect(untar.code === 0, `tar -xzf failed: ${untar.stderr.trim()}`);
  pkg.unpacked = join(target, 'package');
  const files = readdirSync(pkg.unpacked, { recursive: true }).map(String);
  const problems = [];
  for (const required of ['LICENSE', 'README.md', 'package.json']) {
    if (!files.includes(required)) problems.push(`no ${required}`);
  }
  const maps = files.filter((file) => file.endsWith('.map'));
  if (maps.length > 0) problems.push(`${maps.length} .map files (${maps.slice(0, 3).join(', ')})`);
  if (files.includes('package.json')) {
    const manifest = JSON.parse(readFileSync(join(pkg.unpacked, 'package.json'), 'utf8'));
    if (!manifest.repository?.url) problems.push('package.json has no repository.url');
    if (!manifest.homepage) problems.push('package.json has no homepage');
    if (!manifest.bugs?.url && typeof manifest.bugs !== 'string') problems.push('package.json has no bugs');
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
      for (const [dep, range] of Object.entries(manifest[field] ?? {})) {
        if (/^(workspace|link|file|catalog):/.test(range)) problems.push(`${field}.${dep} is "${range}"`);
      }
    }
    if (manifest.version !== pkg.version)
      problems.push(`version ${manifest.version}, folder has ${pkg.version}`);
  }
  expect(problems.length === 0, problems.join('; '));
  return `${files.length} entries: LICENSE, README.md, package.json with repository/homepage/bugs, no .map, no workspace: ranges`;
}

/**
 * Every link in the packed README must work on npmjs.com and anywhere else the README is read
 * alone: absolute https:// or an in-page #anchor. Code blocks and code spans are skipped.
 */
export function checkReadmeLinks(pkg) {
  const text = readFileSync(join(pkg.unpacked, 'README.md'), 'utf8');
  const bad = [];
  let count = 0;
  let fence = null;
  text.split('\n').forEach((raw, index) => {
    const marker = /^\s*(```+|~~~+)/.exec(raw);
    if (marker) {
      if (fence === null) fence = marker[1][0];
      else if (marker[1][0] === fence) fence = null;
      return;
    }
    if (fence !== null) return;
    const line = raw.replace(/`[^`]*`/g, '');
    const targets = [];
    // [text](target "title"), ![alt](target), and reference definitions [id]: target
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]);
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line);
    if (definition) targets.push(definition[1]);
    for (const match of line.matchAll(/<(?:a|img)\s[^>]*(?:href|src)="([^"]+)"/gi)) targets.push(match[1]);
    for (const target of targets) {
      count += 1;
      if (!/^(https:\/\/|#)/.test(target)) bad.push(`line ${index + 1}: ${target}`);
    }
  });
  expect(
    bad.length === 0,
    `${bad.length} of ${count} links are not absolute https or #anchors: ${bad.join(', ')}`,
  );
  return `${count} links, all absolute https or #anchors`;
}

export async function publint(pkg) {
  const result = await run(bin('publint'), ['run', pkg.tarball], { cwd: root, env: cleanEnv() });
  const output = `${result.stdout}\n${result.stderr}`.trim();
  expect(
    result.code === 0 && /All good!/.test(output),
    `publint (exit ${result.code}):\n    ${lastLines(output, 20)}`,
  );
  return 'All good!';
}

export async function attw(pkg) {
  const result = await run(bin('attw'), ['--no-color', '--no-emoji', pkg.tarball], {
    cwd: root,
    env: cleanEnv(),
    timeoutMs: 120_000,
  });
  const output = `${result.stdout}\n${result.stderr}`.trim();
  expect(
    result.code === 0 && /No problems found/.test(output),
    `attw (exit ${result.code}):\n    ${lastLines(output, 30)}`,
  );
  // Table rows such as "│ node16 (from CJS) │ OK (CJS) │ OK (JSON) │": the resolutions checked.
  const modes = [...output.matchAll(/^│ (node10|node16 \(from \w+\)|bundler)\s+│/gm)].map((m) => m[1]);
  // The header row names the entry points checked ("@latch/core/store"): attw checks every
  // `exports` subpath by default; make sure none went unchecked (node10 included, through
  // typesVersions).
  const checked = new Set([...output.matchAll(/"(@latch\/[^"]+)"/g)].map((m) => m[1]));
  const subpaths = exportedSubpaths(pkg);
  const unchecked = subpaths.filter((subpath) => !checked.has(subpath));
  expect(unchecked.length === 0, `attw did not check ${unchecked.join(', ')}:\n    ${lastLines(output, 30)}`);
  expect(modes.includes('node10'), `attw checked no node10 resolution:\n    ${lastLines(output, 30)}`);
  return `No problems found for ${subpaths.join(', ')}${modes.length > 0 ? ` (${modes.join(', ')})` : ''}`;
}

/** `@latch/core`, `@latch/core/store`, …: every subpath the packed package.json exports. */
function exportedSubpaths(pkg) {
  const manifest = JSON.parse(readFileSync(join(pkg.unpacked ?? pkg.dir, 'package.json'), 'utf8'));
  return Object.keys(manifest.exports ?? { '.': null }).map((key) =>
    key === '.' ? manifest.name : `${manifest.name}/${key.replace(/^\.\//, '')}`,
  );
}

function lastLines(text, count) {
  return text.trim().split('\n').slice(-count).join('\n    ');
}
