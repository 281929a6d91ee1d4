#!/usr/bin/env bash
# At most two deploys per environment at once, across every runner that shares the bucket:
# the third waits until one of the first two has finished.
set -euo pipefail
export LATCH_STORE=s3://my-ci-locks/locks

pids=()
for service in api web worker; do
  latch run --name deploy/staging --limit 2 --lease 10m -- ./deploy.sh staging "$service" &
  pids+=("$!")
done
for pid in "${pids[@]}"; do wait "$pid"; done
