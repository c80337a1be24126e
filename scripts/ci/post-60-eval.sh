# The evaluation on the local models (docs/eval.md): two stratified Debian
# Reference questions, all three systems (lethe, rag, loop), on the dev
# server of the e2e tests. Sourced by .ci/run after post-50-real-models.sh,
# whose model servers (on ports of their own) are still up and are reused;
# run alone, it starts its own. `timeout` bounds the step to 15 minutes.
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
