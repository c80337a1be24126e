# The real-model step, last because it is the longest: the evaluation of
# issue 12 on the local chat and embedding models of scripts/models.sh
# (installed from PyPI, cached under $LETHE_CACHE/models-venv-*) over the
# Debian Reference (installed by `make test`, scripts/test-setup.sh): two
# stratified questions, all three systems (lethe, rag, loop), each lethe
# run a whole real-model session of 2 iterations (docs/eval.md's runs use 3;
# with 3 the whole .ci/run took 46 minutes) held to issue 7's structural checks
# (TestRealModelEvaluation; TestRealModelSession runs by hand with `make
# test-real-models`). Sourced by .ci/run after `make test`. The servers get
# ports of their own, so a model server a developer keeps running on
# 8080/8081 is neither used nor disturbed. The test bounds the evaluation to
# 30 minutes (one question took 13.3 on a quiet machine, docs/eval.md);
# `timeout` bounds the whole step.
MODELS_CI_CHAT_PORT=18080
while (exec 3<>"/dev/tcp/127.0.0.1/$MODELS_CI_CHAT_PORT") 2>/dev/null; do MODELS_CI_CHAT_PORT=$((MODELS_CI_CHAT_PORT + 2)); done
MODELS_CI_EMBED_PORT=$((MODELS_CI_CHAT_PORT + 1))
export MODELS_CHAT_PORT=$MODELS_CI_CHAT_PORT MODELS_EMBED_PORT=$MODELS_CI_EMBED_PORT
bash scripts/models.sh start
CLEANUP+=("MODELS_CHAT_PORT=$MODELS_CI_CHAT_PORT MODELS_EMBED_PORT=$MODELS_CI_EMBED_PORT bash scripts/models.sh stop")
LETHE_TEST_REAL_EVAL=1 LETHE_TEST_EVAL_N=2 LETHE_TEST_EVAL_ITERATIONS=2 LETHE_TEST_EVAL_BOUND=30m \
  LETHE_TEST_CHAT_URL="http://127.0.0.1:$MODELS_CI_CHAT_PORT" \
  LETHE_TEST_EMBED_URL="http://127.0.0.1:$MODELS_CI_EMBED_PORT" \
  timeout 34m go test -count=1 -v -run TestRealModelEvaluation -timeout 33m ./e2e/
