#!/usr/bin/env bash
# Runs an evaluation on this machine (docs/eval.md): starts the Temporal dev
# server (unless one answers on LETHE_TEMPORAL_HOST_PORT, default
# 127.0.0.1:7233), the local model servers when no model is configured, a
# worker, and `eval` with the arguments given, which prints the table. The
# corpus defaults to the Debian Reference the question set is about. Called
# by `make eval`.
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
# The binaries go to bin/, never into the output directory
# (eval.out_dir defaults to $dir/eval, the path `go build -o $dir/eval`
# would take). An eval binary an earlier version of this script built
# there is removed; any other file there is refused now, not after the
# questions have run.
out=$LETHE_EVAL_OUT_DIR
if [ "$out" = "$dir/eval" ] && [ -f "$out" ] && [ "$(head -c 4 "$out" | tr -d '\0')" = $'\x7fELF' ]; then
  echo "removing $out, an eval binary built there by an earlier scripts/eval.sh: it is the output directory" >&2
  rm -f "$out"
fi
case "$out/" in "$dir/bin/"*)
  echo "eval.out_dir $out is inside $dir/bin, where the binaries go" >&2
  exit 1
  ;;
esac
if ! mkdir -p "$out" 2>/dev/null || [ ! -w "$out" ]; then
  echo "eval.out_dir $out is not a writable directory (LETHE_EVAL_OUT_DIR)" >&2
  exit 1
fi
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

# The worker and eval read temporal.host_port from the same variable; a
# dev server is started on its port (UI on port+1000) when nothing answers
# there and it is a loopback address.
hostport=${LETHE_TEMPORAL_HOST_PORT:-127.0.0.1:7233}
host=${hostport%:*} port=${hostport##*:}
if ! (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then
  if [ "$host" != 127.0.0.1 ] && [ "$host" != localhost ]; then
    echo "no Temporal server answers at $hostport (LETHE_TEMPORAL_HOST_PORT)" >&2
    exit 1
  fi
  echo "starting Temporal dev server on $hostport (UI http://localhost:$((port + 1000)), log $dir/temporal.log)" >&2
  "$temporal" server start-dev --ip 127.0.0.1 --port "$port" --db-filename "$dir/temporal.db" --log-level warn >"$dir/temporal.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 120); do (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null && break; sleep 0.5; done
fi
mkdir -p "$dir/bin"
go build -o "$dir/bin/worker" ./worker && go build -o "$dir/bin/eval" ./eval
"$dir/bin/worker" >"$dir/worker.log" 2>&1 &
pids+=($!)
echo "worker log: $dir/worker.log" >&2
"$dir/bin/eval" -worker-wait 60s "$@"
