#!/usr/bin/env node
// After `changeset version` bumps package.json, writes the CLI's `--version` constant to match
// (packages/cli/test/version.test.ts fails when the two differ).
import { readFileSync, writeFileSync } from 'node:fs';

const cli = new URL('../packages/cli/', import.meta.url);
const { version } = JSON.parse(readFileSync(new URL('package.json', cli), 'utf8'));
const file = new URL('src/version.ts', cli);
const source = readFileSync(file, 'utf8').replace(/VERSION = '[^']*'/, `VERSION = '${version}'`);
writeFileSync(file, source);
console.log(`sync-cli-version: latch --version prints ${version}`);
