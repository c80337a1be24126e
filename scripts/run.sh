#!/usr/bin/env bash
# Runs one research session on this machine: starts the Temporal dev server
# (unless one answers on 7233), a worker, and the starter, which prints the
# report. Called by `make run`.
set -euo pipefail
goal=$1 dir=$2 corpus=$3
root=$(cd "$(dirname "$0")/.." && pwd)
temporal=${TEMPORAL_CLI:-$root/bin/temporal}
export LETHE_RESEARCH_CORPUS_DIR=${LETHE_RESEARCH_CORPUS_DIR:-$corpus}
export LETHE_GRAPH_PATH=${LETHE_GRAPH_PATH:-$dir/graph.db}
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

if ! (exec 3<>/dev/tcp/127.0.0.1/7233) 2>/dev/null; then
  echo "starting Temporal dev server (UI http://localhost:8233, log $dir/temporal.log)" >&2
  "$temporal" server start-dev --ip 127.0.0.1 --db-filename "$dir/temporal.db" --log-level warn >"$dir/temporal.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 120); do (exec 3<>/dev/tcp/127.0.0.1/7233) 2>/dev/null && break; sleep 0.5; done
fi
go build -o "$dir/worker" ./worker && go build -o "$dir/starter" ./starter
"$dir/worker" >"$dir/worker.log" 2>&1 &
pids+=($!)
echo "worker log: $dir/worker.log" >&2
"$dir/starter" -goal "$goal" -output "$dir/report.md"
