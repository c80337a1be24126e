#!/usr/bin/env bash
# A real Neo4j 5 community server without Docker: the database is fetched
# from Maven Central as Maven artifacts (org.neo4j:neo4j) and run embedded in
# a tiny launcher (tools/neo4j) with the Bolt connector on a loopback port.
#
#   scripts/neo4j.sh build                 build the launcher once (cached by version)
#   scripts/neo4j.sh start [DIR] [PORT]    start in the background, wait until Bolt answers
#   scripts/neo4j.sh stop  [DIR]           stop cleanly (SIGTERM, SIGKILL after 60 s)
#   scripts/neo4j.sh kill  [DIR]           stop at once (SIGKILL: a crash)
#   scripts/neo4j.sh status [DIR]          say whether it runs
#   scripts/neo4j.sh env   [DIR]           print the LETHE_TEST_NEO4J_* exports of a running server
#
# DIR is the data directory (default NEO4J_DIR or ./lethe-data/neo4j): the
# database, its logs, neo4j.pid, neo4j.port, neo4j.out and gc.log (the
# JVM's collections, two files of at most 10 MB) live there. PORT
# defaults to NEO4J_PORT or 7687. User "neo4j", password NEO4J_PASSWORD
# (at least 8 characters); without it, the password kept in DIR/neo4j.password
# (mode 0600), generated at random on the first start: a fixed default would
# open every such server to whoever can reach its port. `env` and `status`
# print it. NEO4J_HEAP (default 768m)
# and NEO4J_PAGECACHE_MB (default 128) size the server's memory.
# NEO4J_VECTOR_MERGE_FACTOR (default 50, Neo4j's own; at least 2) is how
# many Lucene segments of one size the vector index merges at once: fewer
# segments make each vector query cheaper and its recall lower
# (docs/neo4j.md, "The vector index's segments"). It reaches the server
# through DIR/lethe.conf, written at every start. The launcher and its
# libraries are cached under ${LETHE_CACHE:-~/.cache/lethe}/neo4j-<version>/.
set -euo pipefail

NEO4J_VERSION=5.26.30 # keep in step with tools/neo4j/pom.xml
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_DIR="${LETHE_CACHE:-$HOME/.cache/lethe}/neo4j-$NEO4J_VERSION"
HEAP="${NEO4J_HEAP:-768m}"
PAGECACHE_MB="${NEO4J_PAGECACHE_MB:-128}"
VECTOR_MERGE_FACTOR="${NEO4J_VECTOR_MERGE_FACTOR:-50}"
START_TIMEOUT="${NEO4J_START_TIMEOUT:-180}"

die() { echo "neo4j.sh: $*" >&2; exit 1; }

# The cache is keyed by version and by the launcher's sources.
stamp() { cat "$ROOT/tools/neo4j/pom.xml" "$ROOT"/tools/neo4j/src/main/java/org/lethe/neo4j/*.java | sha256sum | cut -c1-16; }

build() {
  local want
  want="$NEO4J_VERSION-$(stamp)"
  if [ -f "$CACHE_DIR/stamp" ] && [ "$(cat "$CACHE_DIR/stamp")" = "$want" ] && [ -f "$CACHE_DIR/launcher.jar" ]; then
    return 0
  fi
  command -v mvn >/dev/null || die "mvn not found (Maven and a Java 17 JDK are needed to build the launcher)"
  command -v java >/dev/null || die "java not found"
  echo "neo4j.sh: building the Neo4j $NEO4J_VERSION launcher (first time only; the artifacts come from Maven Central)" >&2
  local tmp
  tmp="$(mktemp -d)"
  cp -r "$ROOT/tools/neo4j/." "$tmp/src"
  local start=$SECONDS
  if ! (cd "$tmp/src" && mvn -B -q -Dneo4j.version="$NEO4J_VERSION" package >"$tmp/mvn.log" 2>&1); then
    tail -40 "$tmp/mvn.log" >&2
    rm -rf "$tmp"
    die "mvn package failed (command: cd tools/neo4j && mvn -B -Dneo4j.version=$NEO4J_VERSION package)"
  fi
  mkdir -p "$tmp/out"
  cp "$tmp/src/target/lethe-neo4j-launcher-1.jar" "$tmp/out/launcher.jar"
  cp -r "$tmp/src/target/lib" "$tmp/out/lib"
  echo "$want" >"$tmp/out/stamp"
  mkdir -p "$(dirname "$CACHE_DIR")"
  rm -rf "$CACHE_DIR.old"
  [ -e "$CACHE_DIR" ] && mv "$CACHE_DIR" "$CACHE_DIR.old"
  mv "$tmp/out" "$CACHE_DIR"
  rm -rf "$tmp" "$CACHE_DIR.old"
  echo "neo4j.sh: launcher built in $((SECONDS - start))s: $CACHE_DIR" >&2
}

datadir() {
  local d="${1:-${NEO4J_DIR:-$ROOT/lethe-data/neo4j}}"
  mkdir -p "$d"
  (cd "$d" && pwd)
}

# password_for DIR: NEO4J_PASSWORD when set, else DIR/neo4j.password,
# made on first use from 24 random bytes; either way DIR/neo4j.password
# holds what the server was started with, readable by this user only.
password_for() {
  local f="$1/neo4j.password"
  if [ -n "${NEO4J_PASSWORD:-}" ]; then
    (umask 077 && printf '%s\n' "$NEO4J_PASSWORD" >"$f")
  elif [ ! -s "$f" ]; then
    (umask 077 && head -c 24 /dev/urandom | base64 | tr -d '\n/+=' >"$f" && echo >>"$f")
  fi
  chmod 600 "$f"
  head -n 1 "$f"
}

# stored_password DIR: what the server in DIR was started with.
stored_password() { head -n 1 "$1/neo4j.password" 2>/dev/null || echo "(unknown: $1/neo4j.password is missing)"; }

pid_of() {
  local d="$1" pid
  [ -f "$d/neo4j.pid" ] || return 1
  pid="$(cat "$d/neo4j.pid")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

bolt_answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start() {
  local d port pid
  d="$(datadir "${1:-}")"
  port="${2:-${NEO4J_PORT:-7687}}"
  if pid="$(pid_of "$d")"; then
    echo "neo4j.sh: already running (pid $pid, bolt://127.0.0.1:$(cat "$d/neo4j.port"), data $d)"
    return 0
  fi
  local PASSWORD
  PASSWORD="$(password_for "$d")"
  [ ${#PASSWORD} -ge 8 ] || die "NEO4J_PASSWORD must have at least 8 characters"
  [[ "$VECTOR_MERGE_FACTOR" =~ ^[0-9]+$ ]] && [ "$VECTOR_MERGE_FACTOR" -ge 2 ] ||
    die "NEO4J_VECTOR_MERGE_FACTOR must be an integer of at least 2 (Lucene merges at least two segments), not '$VECTOR_MERGE_FACTOR'"
  if bolt_answers "$port"; then
    die "port $port is in use by another process"
  fi
  build
  rm -f "$d/home/ready"
  {
    echo "# Written by scripts/neo4j.sh at every start; edit the variables, not this file."
    echo "internal.dbms.index.vector.standard_merge_factor=$VECTOR_MERGE_FACTOR"
  } >"$d/lethe.conf"
  local start=$SECONDS
  # setsid: the server outlives the shell that started it, in its own
  # process group. The password goes through the environment, not argv.
  NEO4J_PASSWORD="$PASSWORD" setsid java -Xms256m -Xmx"$HEAP" -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError \
    -Xlog:gc:file="$d/gc.log":time,uptime:filecount=2,filesize=10m \
    --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
    --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
    -Dio.netty.tryReflectionSetAccessible=true \
    -cp "$CACHE_DIR/launcher.jar:$CACHE_DIR/lib/*" org.lethe.neo4j.Launcher \
    --home "$d/home" --host 127.0.0.1 --port "$port" --pagecache-mb "$PAGECACHE_MB" --conf "$d/lethe.conf" \
    </dev/null >"$d/neo4j.out" 2>&1 &
  pid=$!
  echo "$pid" >"$d/neo4j.pid"
  echo "$port" >"$d/neo4j.port"
  while ! { [ -f "$d/home/ready" ] && bolt_answers "$port"; }; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -30 "$d/neo4j.out" >&2
      rm -f "$d/neo4j.pid"
      die "the server exited during start (log: $d/neo4j.out, $d/home/logs/debug.log)"
    fi
    if [ $((SECONDS - start)) -ge "$START_TIMEOUT" ]; then
      tail -30 "$d/neo4j.out" >&2
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$d/neo4j.pid"
      die "Bolt did not answer on port $port within ${START_TIMEOUT}s"
    fi
    sleep 0.5
  done
  echo "neo4j.sh: Neo4j $NEO4J_VERSION ready in $((SECONDS - start))s on bolt://127.0.0.1:$port (pid $pid, user neo4j, data $d)"
}

stop() {
  local d pid sig="${2:-TERM}" waited=0
  d="$(datadir "${1:-}")"
  if ! pid="$(pid_of "$d")"; then
    rm -f "$d/neo4j.pid"
    echo "neo4j.sh: not running (data $d)"
    return 0
  fi
  kill -"$sig" "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$waited" -ge 120 ]; then # 60 s
      kill -KILL "$pid" 2>/dev/null || true
    fi
    sleep 0.5
    waited=$((waited + 1))
  done
  rm -f "$d/neo4j.pid" "$d/home/ready"
  echo "neo4j.sh: stopped (pid $pid, SIG$sig)"
}

status() {
  local d pid
  d="$(datadir "${1:-}")"
  if pid="$(pid_of "$d")"; then
    echo "neo4j.sh: running (pid $pid, bolt://127.0.0.1:$(cat "$d/neo4j.port"), user neo4j, password $(stored_password "$d"), data $d)"
  else
    echo "neo4j.sh: not running (data $d)"
    return 1
  fi
}

print_env() {
  local d
  d="$(datadir "${1:-}")"
  pid_of "$d" >/dev/null || die "not running (data $d)"
  echo "export LETHE_TEST_NEO4J_URI=bolt://127.0.0.1:$(cat "$d/neo4j.port")"
  echo "export LETHE_TEST_NEO4J_USER=neo4j"
  echo "export LETHE_TEST_NEO4J_PASSWORD=$(stored_password "$d")"
}

cmd="${1:-}"
shift || true
case "$cmd" in
  build) build ;;
  start) start "$@" ;;
  stop) stop "${1:-}" TERM ;;
  kill) stop "${1:-}" KILL ;;
  status) status "$@" ;;
  env) print_env "$@" ;;
  *) die "usage: scripts/neo4j.sh build|start [DIR] [PORT]|stop [DIR]|kill [DIR]|status [DIR]|env [DIR]" ;;
esac
