# A whole session against real local models (issue 7): the chat and
# embedding servers of scripts/models.sh (installed from PyPI into
# ${LETHE_CACHE}/models-venv-*, once per machine), over the Debian Reference
# as an offline corpus, on a real dev server. Sourced by .ci/run after
# `make test`; the test prints tokens, per-call latency and the share of
# wall time spent outside model calls.
apt_install debian-reference-en
bash scripts/models.sh start
CLEANUP+=("bash scripts/models.sh stop")
LETHE_TEST_REAL_MODELS=1 go test -count=1 -v -run TestRealModelSession -timeout 10m ./e2e/
