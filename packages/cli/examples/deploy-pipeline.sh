#!/usr/bin/env bash
# One production deploy at a time, across every runner that shares the bucket.
set -euo pipefail
export LATCH_STORE=s3://my-ci-locks/locks

# Once, before the pipeline's first lock: does the store honour what locks rely on? (exit 3: no)
latch doctor

# Wrap one command: wait for the lock, run, release, pass the exit code on.
latch run --name deploy/production --lease 10m -- ./deploy.sh production

# Or hold the lock across several steps (or jobs) and release it by its handle.
handle=$(latch acquire --name deploy/production --lease 30m --context "release $RELEASE" | jq -r .handle)
./migrate.sh production
./deploy.sh production
latch release --handle "$handle"
latch status --name deploy/production
