#!/usr/bin/env bash
# The evaluation on the local models (docs/eval.md): two stratified Debian
# Reference questions, all three systems (lethe, rag, loop), on the dev
# server of the e2e tests, as the last step of .ci/run does
# (scripts/ci/post-50-real-models.sh). By hand:
#   bash scripts/eval-real-models.sh            # LETHE_TEST_EVAL_N=12 for more
# It reuses model servers given by MODELS_CI_CHAT_PORT/MODELS_CI_EMBED_PORT
# or starts its own. The test bounds the evaluation to LETHE_TEST_EVAL_BOUND
# (30m); `timeout` bounds the script a little later.
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
bound=${LETHE_TEST_EVAL_BOUND:-30m}
LETHE_TEST_REAL_EVAL=1 LETHE_TEST_EVAL_N=${LETHE_TEST_EVAL_N:-2} LETHE_TEST_EVAL_BOUND=$bound \
  LETHE_TEST_CHAT_URL="http://127.0.0.1:$MODELS_CI_CHAT_PORT" \
  LETHE_TEST_EMBED_URL="http://127.0.0.1:$MODELS_CI_EMBED_PORT" \
  timeout "$(( ${bound%m} + 4 ))m" go test -count=1 -v -run TestRealModelEvaluation -timeout "$(( ${bound%m} + 3 ))m" ./e2e/
