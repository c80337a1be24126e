#!/usr/bin/env bash
# Runs an evaluation on this machine (docs/eval.md): starts the Temporal dev
# server (unless one answers on 7233), the local model servers when no model
# is configured, a worker, and `eval` with the arguments given, which prints
# the table. The corpus defaults to the Debian Reference the question set
# is about. Called by `make eval`.
set -euo pipefail
dir=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
temporal=${TEMPORAL_CLI:-$root/bin/temporal}
for c in /usr/share/debian-reference /usr/share/doc/debian-reference-en/docs; do
  if [ -z "${LETHE_RESEARCH_CORPUS_DIR:-}" ] && ls "$c"/*.html >/dev/null 2>&1; then export LETHE_RESEARCH_CORPUS_DIR=$c; fi
done
if [ -z "${LETHE_RESEARCH_CORPUS_DIR:-}" ]; then
  echo "no corpus: apt-get install debian-reference-en, or set LETHE_RESEARCH_CORPUS_DIR" >&2
  exit 1
fi
export LETHE_GRAPH_PATH=${LETHE_GRAPH_PATH:-$dir/graph.db}
export LETHE_EVAL_OUT_DIR=${LETHE_EVAL_OUT_DIR:-$dir/eval}
pids=()
stop_models=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "$stop_models" ]; then bash "$root/scripts/models.sh" stop || true; fi
}
trap cleanup EXIT

if [ -z "${LETHE_LLM_BASE_URL:-}" ] && [ -z "${LETHE_CONFIG:-}" ]; then
  echo "no model configured (LETHE_LLM_BASE_URL unset): using the local models (scripts/models.sh)" >&2
  bash "$root/scripts/models.sh" status >/dev/null 2>&1 || stop_models=1
  bash "$root/scripts/models.sh" start
  eval "$(bash "$root/scripts/models.sh" env)"
  export LETHE_BUDGET_MAX_ITERATIONS=${LETHE_BUDGET_MAX_ITERATIONS:-6}
fi

if ! (exec 3<>/dev/tcp/127.0.0.1/7233) 2>/dev/null; then
  echo "starting Temporal dev server (UI http://localhost:8233, log $dir/temporal.log)" >&2
  "$temporal" server start-dev --ip 127.0.0.1 --db-filename "$dir/temporal.db" --log-level warn >"$dir/temporal.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 120); do (exec 3<>/dev/tcp/127.0.0.1/7233) 2>/dev/null && break; sleep 0.5; done
fi
go build -o "$dir/worker" ./worker && go build -o "$dir/eval" ./eval
"$dir/worker" >"$dir/worker.log" 2>&1 &
pids+=($!)
echo "worker log: $dir/worker.log" >&2
"$dir/eval" "$@"
