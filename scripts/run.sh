#!/usr/bin/env bash
# Runs one research session on this machine: starts the Temporal dev server
# (unless one answers on 7233), the local model servers when no model is
# configured, a worker, and the starter, which prints the report. Called by
# `make run`.
set -euo pipefail
goal=$1 dir=$2 corpus=$3
root=$(cd "$(dirname "$0")/.." && pwd)
temporal=${TEMPORAL_CLI:-$root/bin/temporal}
export LETHE_RESEARCH_CORPUS_DIR=${LETHE_RESEARCH_CORPUS_DIR:-$corpus}
export LETHE_GRAPH_PATH=${LETHE_GRAPH_PATH:-$dir/graph.db}
pids=()
stop_models=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "$stop_models" ]; then bash "$root/scripts/models.sh" stop || true; fi
}
trap cleanup EXIT

# No model configured: the local models of scripts/models.sh (installed once
# into ~/.cache/lethe) are the embedded default, with settings for a small
# CPU model; every LETHE_* variable you set still wins.
if [ -z "${LETHE_LLM_BASE_URL:-}" ] && [ -z "${LETHE_CONFIG:-}" ]; then
  echo "no model configured (LETHE_LLM_BASE_URL unset): using the local models (scripts/models.sh)" >&2
  bash "$root/scripts/models.sh" status >/dev/null 2>&1 || stop_models=1
  bash "$root/scripts/models.sh" start
  eval "$(bash "$root/scripts/models.sh" env)"
  export LETHE_BUDGET_MAX_ITERATIONS=${LETHE_BUDGET_MAX_ITERATIONS:-6}
fi

# Search providers (docs/providers.md): unless chosen (LETHE_RESEARCH_PROVIDERS
# or a config file), a machine that reaches Wikipedia searches the web first
# (SearXNG and keyed providers when configured, then the keyless Wikipedia
# and arXiv) with the corpus as the last fallback; offline, the corpus alone.
if [ -z "${LETHE_RESEARCH_PROVIDERS:-}" ] && [ -z "${LETHE_CONFIG:-}" ]; then
  chain=""
  if curl -fsS --max-time 4 -o /dev/null "https://en.wikipedia.org/w/api.php?action=query&meta=siteinfo&format=json" 2>/dev/null; then
    [ -n "${LETHE_RESEARCH_SEARXNG_URL:-}" ] && chain="searxng,"
    [ -n "${LETHE_RESEARCH_TAVILY_API_KEY:-}" ] && chain="${chain}tavily,"
    [ -n "${LETHE_RESEARCH_BRAVE_API_KEY:-}" ] && chain="${chain}brave,"
    chain="${chain}wikipedia,arxiv,"
  elif [ -n "${LETHE_RESEARCH_SEARXNG_URL:-}" ]; then
    chain="searxng," # a SearXNG on this network may still answer
  fi
  [ -n "$LETHE_RESEARCH_CORPUS_DIR" ] && chain="${chain}corpus,"
  chain=${chain%,}
  export LETHE_RESEARCH_PROVIDERS="${chain:-none}"
  echo "search providers: $LETHE_RESEARCH_PROVIDERS (set LETHE_RESEARCH_PROVIDERS to choose)" >&2
fi

# The worker's Prometheus listener (telemetry.metrics_addr, default
# 127.0.0.1:9464): a `make run` beside a running worker took the same port,
# and its worker exited with "bind: address already in use". Unless an
# address is chosen (LETHE_TELEMETRY_METRICS_ADDR, empty to turn metrics
# off, or metrics_addr in $LETHE_CONFIG), the first loopback port from 9464
# that nothing listens on is used.
metrics_chosen() {
  [ -n "${LETHE_TELEMETRY_METRICS_ADDR+set}" ] ||
    { [ -n "${LETHE_CONFIG:-}" ] && grep -q 'metrics_addr' "$LETHE_CONFIG" 2>/dev/null; }
}
# free_port FROM TO: the first port in FROM..TO that refuses a connection
# on 127.0.0.1 (the worker binds it a moment later; a port taken between
# the two shows as the worker's bind error below).
free_port() {
  local p
  for p in $(seq "$1" "$2"); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  return 1
}
if metrics_chosen; then
  [ -z "${LETHE_TELEMETRY_METRICS_ADDR:-}" ] || echo "metrics: http://$LETHE_TELEMETRY_METRICS_ADDR/metrics" >&2
elif port=$(free_port 9464 9563); then
  export LETHE_TELEMETRY_METRICS_ADDR=127.0.0.1:$port
  busy=""
  [ "$port" = 9464 ] || busy=", 9464 is in use"
  echo "metrics: http://$LETHE_TELEMETRY_METRICS_ADDR/metrics (first free port from 9464$busy; set LETHE_TELEMETRY_METRICS_ADDR to choose)" >&2
else
  echo "metrics: no free port in 127.0.0.1:9464-9563; the worker's default may fail to bind" >&2
fi

# model_of URL KEY: the model a server names first in GET URL/v1/models.
model_of() {
  local auth=()
  [ -n "${2:-}" ] && auth=(-H "Authorization: Bearer $2")
  curl -fsS --max-time 5 "${auth[@]}" "${1%/}/v1/models" 2>/dev/null |
    grep -o '"data":[[:space:]]*\[[[:space:]]*{[^{}]*"id":[[:space:]]*"[^"]*"' | head -1 | sed 's/.*"id":[[:space:]]*"//; s/"$//'
}
llm_url=${LETHE_LLM_BASE_URL:-http://127.0.0.1:8080}
embed_url=${LETHE_EMBED_BASE_URL:-http://127.0.0.1:8081}
echo "models: chat $llm_url answered as '$(model_of "$llm_url" "${LETHE_LLM_API_KEY:-}")'," \
  "embeddings $embed_url answered as '$(model_of "$embed_url" "${LETHE_EMBED_API_KEY:-}")'" >&2

if ! (exec 3<>/dev/tcp/127.0.0.1/7233) 2>/dev/null; then
  echo "starting Temporal dev server (UI http://localhost:8233, log $dir/temporal.log)" >&2
  "$temporal" server start-dev --ip 127.0.0.1 --db-filename "$dir/temporal.db" --log-level warn >"$dir/temporal.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 120); do (exec 3<>/dev/tcp/127.0.0.1/7233) 2>/dev/null && break; sleep 0.5; done
fi
mkdir -p "$dir/bin"
go build -o "$dir/bin/worker" ./worker && go build -o "$dir/bin/starter" ./starter
"$dir/bin/worker" >"$dir/worker.log" 2>&1 &
worker=$!
pids+=("$worker")
echo "worker log: $dir/worker.log" >&2
# The starter waits for the session's result; a worker that exits (a port
# in use, a setting it refuses) would leave it waiting for ever, so the
# script watches both and says why. The worker was started a moment ago:
# the starter gives it a minute to open its polls, not the default 5 s.
"$dir/bin/starter" -goal "$goal" -output "$dir/report.md" -worker-wait 60s &
starter=$!
pids+=("$starter")
while kill -0 "$starter" 2>/dev/null; do
  if ! kill -0 "$worker" 2>/dev/null; then
    echo "the worker exited before the session ended; the end of $dir/worker.log:" >&2
    tail -n 15 "$dir/worker.log" >&2
    exit 1
  fi
  sleep 1
done
wait "$starter"
