#!/usr/bin/env bash
# `make test`: every test on a machine set up by scripts/test-setup.sh.
#
#   bash scripts/test.sh [PACKAGES]     (default ./...)
#
# Sets up and starts what the tests need (Debian packages, a Neo4j server;
# LETHE_TEST_SKIP opts out of components), runs
# `go test -race -count=1 -parallel 8 -timeout 30m` with LETHE_TEST_STRICT=1
# (a missing component fails its tests), stops what it started, and prints
# go test's output as a plain run does (ok/FAIL package lines, failed tests)
# followed by the skipped tests with their reasons and "N passed, N failed"
# (internal/testsummary reading go test -json). The exit status is go test's.
# -parallel 8: the e2e fault tests run side by side (each mostly waits out
# a two-minute outage). -p 1: one package at a time, so that the e2e
# package's workers and browsers do not load the machine under the
# browser and timing tests of other packages (a js.html page read before
# its script ran was the flake); the total is no longer on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
export LETHE_CACHE="${LETHE_CACHE:-$HOME/.cache/lethe}"

CLEANUP=()
cleanup() {
  local i
  for ((i = ${#CLEANUP[@]} - 1; i >= 0; i--)); do eval "${CLEANUP[i]}" || true; done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# shellcheck source=scripts/test-setup.sh
source scripts/test-setup.sh

tmp="$(mktemp -d)"
CLEANUP+=("rm -rf '$tmp'")
go build -o "$tmp/testsummary" ./internal/testsummary

set +e
echo "go test -json -race -count=1 -p 1 -parallel 8 -timeout 40m ${*:-./...}"
go test -json -race -count=1 -p 1 -parallel 8 -timeout 40m "${@:-./...}" 2>&1 |
  "$tmp/testsummary" -trim "$(go list -m)/"
rc=${PIPESTATUS[0]}
set -e
exit "$rc"
