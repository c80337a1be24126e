#!/usr/bin/env bash
# The evaluation on the local models (docs/eval.md): two stratified Debian
# Reference questions, all three systems (lethe, rag, loop), on the dev
# server of the e2e tests. Not in .ci/run yet: it has not been run to the
# end within a CI time bound (docs/eval.md). Run it by hand:
#   bash scripts/eval-real-models.sh
# It reuses model servers given by MODELS_CI_CHAT_PORT/MODELS_CI_EMBED_PORT
# or starts its own. `timeout` bounds it to 15 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
CLEANUP=()
trap 'for c in "${CLEANUP[@]}"; do eval "$c" || true; done' EXIT
if [ -z "${MODELS_CI_CHAT_PORT:-}" ]; then
  MODELS_CI_CHAT_PORT=18080
  while (exec 3<>"/dev/tcp/127.0.0.1/$MODELS_CI_CHAT_PORT") 2>/dev/null; do MODELS_CI_CHAT_PORT=$((MODELS_CI_CHAT_PORT + 2)); done
  MODELS_CI_EMBED_PORT=$((MODELS_CI_CHAT_PORT + 1))
  MODELS_CHAT_PORT=$MODELS_CI_CHAT_PORT MODELS_EMBED_PORT=$MODELS_CI_EMBED_PORT bash scripts/models.sh start
  CLEANUP+=("MODELS_CHAT_PORT=$MODELS_CI_CHAT_PORT MODELS_EMBED_PORT=$MODELS_CI_EMBED_PORT bash scripts/models.sh stop")
fi
LETHE_TEST_REAL_EVAL=1 LETHE_TEST_EVAL_N=2 \
  LETHE_TEST_CHAT_URL="http://127.0.0.1:$MODELS_CI_CHAT_PORT" \
  LETHE_TEST_EMBED_URL="http://127.0.0.1:$MODELS_CI_EMBED_PORT" \
  timeout 15m go test -count=1 -v -run TestRealModelEvaluation -timeout 14m ./e2e/
