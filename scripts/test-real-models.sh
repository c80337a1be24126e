#!/usr/bin/env bash
# A whole session against real local models (issue 7): the chat and
# embedding servers of scripts/models.sh (installed from PyPI into
# ${LETHE_CACHE}/models-venv-*, once per machine), over the Debian Reference
# as an offline corpus, on a real dev server. `make test-real-models` runs
# it; the test prints tokens, per-call latency and the share of wall time
# spent outside model calls. .ci/run's last step holds every lethe session
# of its evaluation to the same checks (TestRealModelEvaluation,
# scripts/ci/post-50-real-models.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! dpkg -s debian-reference-en >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debian-reference-en >/dev/null
fi
make -s temporal
bash scripts/models.sh start
trap 'bash scripts/models.sh stop' EXIT
LETHE_TEST_REAL_MODELS=1 go test -count=1 -v -run TestRealModelSession -timeout 10m ./e2e/
