#!/usr/bin/env bash
# A production-shaped Temporal cluster on one machine, without Docker: a
# Temporal server built from the go.temporal.io/server module (the version
# the CLI of the Makefile bundles) on PostgreSQL 15 from Debian for
# persistence and visibility, Neo4j (scripts/neo4j.sh), and two worker
# processes on split task queues. docs/deploy.md has the same recipe for
# real machines.
#
#   scripts/cluster.sh up DIR               PostgreSQL + Temporal + Neo4j (no workers); idempotent
#   scripts/cluster.sh workers DIR [BIN]    the two workers (A: model + browser queues, B: the rest)
#   scripts/cluster.sh start DIR            up + workers (`make cluster`)
#   scripts/cluster.sh restart C DIR        C = temporal|postgres|neo4j: SIGTERM, wait, start on the same port and data
#   scripts/cluster.sh kill C DIR           SIGKILL of C's processes (a crash)
#   scripts/cluster.sh stop DIR             stops everything started in DIR
#   scripts/cluster.sh status DIR
#   scripts/cluster.sh env DIR              prints DIR/env (shell exports for the worker, starter and tests)
#
# DIR (default lethe-data/cluster) holds every byte: ports (the loopback
# ports chosen at the first up, kept across restarts), secrets (generated
# passwords, mode 600), pg/ (the database cluster), temporal/ (server
# config, log, pid), neo4j/, bin/worker, worker-{a,b}.{log,pid}, env.
# Everything listens on 127.0.0.1 only. Binaries are cached under
# ${LETHE_CACHE:-~/.cache/lethe}/temporal-server-<version>/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${LETHE_CACHE:-$HOME/.cache/lethe}"
CLI="${TEMPORAL_CLI:-$CACHE/temporal-v1.5.1/temporal}"
PG_VERSION=15
PG_BIN="/usr/lib/postgresql/$PG_VERSION/bin"
# workflows.SearchAttributes(): the attributes a session upserts.
SEARCH_ATTRIBUTES="LetheStatus=Keyword LetheIteration=Int LethePressure=Double LethePsi=Double LetheTasksDone=Int LetheEvidence=Int LetheTokens=Double"
# config.WebProviders(): one search queue <task_queue>-search-<provider>
# each. The worker refuses a queue it does not know, so a provider removed
# there fails `workers` loudly.
WEB_PROVIDERS="searxng wikipedia arxiv tavily brave"
START_TIMEOUT="${CLUSTER_START_TIMEOUT:-180}"

die() { echo "cluster.sh: $*" >&2; exit 1; }
say() { echo "cluster.sh: $*" >&2; }

datadir() {
  local d="${1:-$ROOT/lethe-data/cluster}"
  mkdir -p "$d"
  (cd "$d" && pwd)
}

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# wait_for SECONDS CMD...: runs CMD every half second until it succeeds
# (0), the time is up (1), or CMD says waiting is pointless (2: the
# process it waits for died).
wait_for() {
  local limit=$1 start=$SECONDS rc
  shift
  while :; do
    rc=0
    "$@" || rc=$?
    [ "$rc" = 0 ] && return 0
    [ "$rc" = 2 ] && return 2
    [ $((SECONDS - start)) -lt "$limit" ] || return 1
    sleep 0.5
  done
}

# gone PID: the process has exited.
gone() { ! kill -0 "$1" 2>/dev/null; }

# random_secret: 32 hex characters from the kernel's generator.
random_secret() { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }

# free_port TAKEN...: a random loopback port in 20000-32767 (below Linux's
# ephemeral range, where outgoing connections take theirs) that nothing
# listens on and that is not among TAKEN.
free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$((20000 + RANDOM % 12768))
    [[ " $* " == *" $p "* ]] && continue
    answers "$p" || { echo "$p"; return 0; }
  done
  die "no free loopback port found"
}

# ports DIR: chooses every port once and keeps them in DIR/ports, so that
# a restart finds each component where the others expect it.
ports() {
  local d=$1 taken="" name p
  if [ ! -f "$d/ports" ]; then
    {
      for name in PG FRONTEND FRONTEND_HTTP FRONTEND_MEMBER HISTORY HISTORY_MEMBER MATCHING MATCHING_MEMBER \
        WORKER WORKER_MEMBER SERVER_METRICS NEO4J WORKER_A_METRICS WORKER_B_METRICS; do
        p=$(free_port $taken)
        taken="$taken $p"
        echo "PORT_$name=$p"
      done
    } >"$d/ports.tmp"
    mv "$d/ports.tmp" "$d/ports"
  fi
  # shellcheck disable=SC1091
  . "$d/ports"
}

secrets() {
  local d=$1
  if [ ! -f "$d/secrets" ]; then
    (umask 077 && printf 'PG_PASSWORD=%s\nNEO4J_PASSWORD=%s\n' "$(random_secret)" "$(random_secret)" >"$d/secrets")
  fi
  # shellcheck disable=SC1091
  . "$d/secrets"
}

# ---------------------------------------------------------------- binaries

# server_version: the go.temporal.io/server version the CLI is built with,
# so the cluster runs the server `make test` runs as the dev server.
server_version() {
  [ -x "$CLI" ] || make -C "$ROOT" -s temporal >&2
  go version -m "$CLI" | awk '$1 == "dep" && $2 == "go.temporal.io/server" { print $3 }'
}

# server_bins: builds the server and temporal-sql-tool once per version
# (about ten minutes on two busy cores) and prints their directory.
server_bins() {
  local ver dir start
  ver=$(server_version)
  [ -n "$ver" ] || die "cannot read the go.temporal.io/server version of $CLI"
  dir="$CACHE/temporal-server-$ver"
  if [ ! -x "$dir/server" ] || [ ! -x "$dir/sql" ]; then
    say "building the Temporal server $ver and temporal-sql-tool (first time only) into $dir"
    start=$SECONDS
    mkdir -p "$dir"
    (cd /tmp && GOBIN="$dir" go install "go.temporal.io/server/cmd/server@$ver" "go.temporal.io/server/cmd/tools/sql@$ver") >&2 ||
      die "go install go.temporal.io/server/cmd/server@$ver failed"
    say "built in $((SECONDS - start))s"
  fi
  echo "$dir"
}

# ---------------------------------------------------------------- PostgreSQL

# PostgreSQL refuses to run as root: as root the cluster belongs to the
# postgres user that Debian's package creates.
pg_user() { if [ "$(id -u)" = 0 ]; then echo postgres; else id -un; fi; }

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# deps: the Debian packages the cluster runs on, installed when missing
# (a fresh machine has none of them).
deps() {
  local pkgs=()
  [ -x "$PG_BIN/postgres" ] || pkgs+=("postgresql-$PG_VERSION")
  command -v java >/dev/null && command -v mvn >/dev/null || pkgs+=(openjdk-17-jdk-headless maven)
  [ ${#pkgs[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || die "missing Debian packages: ${pkgs[*]} (apt-get install them as root)"
  say "installing ${pkgs[*]} (Debian)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}"; } >&2 ||
    die "apt-get install ${pkgs[*]} failed"
}

pg_init() {
  local d=$1
  [ -f "$d/pg/PG_VERSION" ] && return 0
  mkdir -p "$d/pg"
  chmod 700 "$d/pg"
  chown "$(pg_user)" "$d/pg"
  as_pg test -w "$d/pg" || die "user $(pg_user) cannot reach $d/pg (every parent directory needs o+x); choose another DIR"
  (umask 077 && echo "$PG_PASSWORD" >"$d/pg.pw" && chown "$(pg_user)" "$d/pg.pw")
  # The superuser is "temporal": the server and its schema tool log in as
  # it over TCP with a password; local socket logins are off.
  as_pg "$PG_BIN/initdb" -D "$d/pg" -U temporal --pwfile="$d/pg.pw" --auth-host=scram-sha-256 \
    --auth-local=reject -E UTF8 --locale=C.UTF-8 >"$d/pg-init.log" 2>&1 ||
    { rm -f "$d/pg.pw"; cat "$d/pg-init.log" >&2; die "initdb failed"; }
  rm -f "$d/pg.pw"
  cat >>"$d/pg/postgresql.conf" <<EOF
# scripts/cluster.sh: loopback only, on the port of DIR/ports, no socket file.
listen_addresses = '127.0.0.1'
port = $PORT_PG
unix_socket_directories = ''
max_connections = 200
EOF
}

pg_running() { as_pg "$PG_BIN/pg_ctl" -D "$1/pg" status >/dev/null 2>&1; }

pg_start() {
  local d=$1
  pg_running "$d" && return 0
  answers "$PORT_PG" && die "port $PORT_PG (PostgreSQL) is taken by another process"
  as_pg "$PG_BIN/pg_ctl" -D "$d/pg" -l "$d/pg/server.log" -w -t "$START_TIMEOUT" start >/dev/null ||
    { tail -20 "$d/pg/server.log" >&2; die "PostgreSQL did not start (log $d/pg/server.log)"; }
}

pg_stop() {
  local d=$1 mode=${2:-fast}
  [ -f "$d/pg/PG_VERSION" ] && pg_running "$d" || return 0
  as_pg "$PG_BIN/pg_ctl" -D "$d/pg" -m "$mode" -w -t 120 stop >/dev/null
}

pg_kill() {
  local d=$1 pid kids
  [ -f "$d/pg/postmaster.pid" ] || return 0
  pid=$(head -1 "$d/pg/postmaster.pid")
  # Each of the postmaster's children leads its own process group: they
  # are killed by parent, with it, as a power cut would.
  kids=$(ps -o pid= --ppid "$pid" | tr '\n' ' ')
  # shellcheck disable=SC2086
  kill -KILL "$pid" $kids 2>/dev/null || true
  wait_for 30 gone "$pid" || true
}

# sql_tool DIR DB ARGS...: temporal-sql-tool against DB of the local server.
sql_tool() {
  local d=$1 db=$2
  shift 2
  SQL_PASSWORD="$PG_PASSWORD" "$BINS/sql" --plugin postgres12 --ep 127.0.0.1 -p "$PORT_PG" -u temporal \
    --db "$db" "$@" >>"$d/schema.log" 2>&1 || { tail -20 "$d/schema.log" >&2; die "temporal-sql-tool $* on $db failed (log $d/schema.log)"; }
}

pg_has_db() {
  PGPASSWORD="$PG_PASSWORD" psql -h 127.0.0.1 -p "$PORT_PG" -U temporal -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname = '$1'" | grep -q 1
}

# schema DIR: the server's own tool creates both databases, sets up the
# base schema and applies every versioned step; update-schema is a no-op
# on a database already at the newest version, so this runs at every up.
schema() {
  local d=$1 ver db kind
  ver=${BINS##*/temporal-server-}
  local mod
  mod="$(go env GOMODCACHE)/go.temporal.io/server@$ver/schema/postgresql/v12"
  [ -d "$mod" ] || (cd /tmp && go mod download "go.temporal.io/server@$ver") || die "cannot download the schema of go.temporal.io/server@$ver"
  for kind in temporal visibility; do
    db=temporal
    [ "$kind" = visibility ] && db=temporal_visibility
    if [ ! -f "$d/schema-$kind.done" ]; then
      pg_has_db "$db" || sql_tool "$d" "$db" create-database
      sql_tool "$d" "$db" setup-schema -v 0.0
      touch "$d/schema-$kind.done"
    fi
    sql_tool "$d" "$db" update-schema -d "$mod/$kind/versioned"
  done
}

# ---------------------------------------------------------------- Temporal

# datastore DB CONNS: one SQL datastore of the server's config.
datastore() {
  cat <<EOT
      sql:
        pluginName: postgres12
        databaseName: $1
        connectAddr: 127.0.0.1:$PORT_PG
        connectProtocol: tcp
        user: temporal
        password: $PG_PASSWORD
        maxConns: $2
        maxIdleConns: $2
        maxConnLifetime: 1h
EOT
}

# temporal_config DIR: the server's config, written at every up from
# DIR/ports and DIR/secrets. One process runs all four services
# (frontend, history, matching, worker), each on its own loopback port.
temporal_config() {
  local d=$1
  mkdir -p "$d/temporal/config/dynamicconfig"
  (umask 077 && cat >"$d/temporal/config/cluster.yaml" <<EOT
# Written by scripts/cluster.sh at every up; edit the script, not this file.
log:
  stdout: true
  level: warn
persistence:
  # Fixed when the database is first set up: a real cluster takes 512 or more.
  numHistoryShards: 4
  defaultStore: default
  visibilityStore: visibility
  datastores:
    default:
$(datastore temporal 20)
    visibility:
$(datastore temporal_visibility 10)
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
  metrics:
    prometheus:
      framework: tally
      timerType: histogram
      listenAddress: 127.0.0.1:$PORT_SERVER_METRICS
services:
  frontend:
    rpc: {grpcPort: $PORT_FRONTEND, httpPort: $PORT_FRONTEND_HTTP, membershipPort: $PORT_FRONTEND_MEMBER, bindOnIP: 127.0.0.1}
  history:
    rpc: {grpcPort: $PORT_HISTORY, membershipPort: $PORT_HISTORY_MEMBER, bindOnIP: 127.0.0.1}
  matching:
    rpc: {grpcPort: $PORT_MATCHING, membershipPort: $PORT_MATCHING_MEMBER, bindOnIP: 127.0.0.1}
  worker:
    rpc: {grpcPort: $PORT_WORKER, membershipPort: $PORT_WORKER_MEMBER, bindOnIP: 127.0.0.1}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:$PORT_FRONTEND
      httpAddress: 127.0.0.1:$PORT_FRONTEND_HTTP
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: $d/temporal/config/dynamicconfig/cluster.yaml
  pollInterval: 10s
EOT
  )
  [ -f "$d/temporal/config/dynamicconfig/cluster.yaml" ] || cat >"$d/temporal/config/dynamicconfig/cluster.yaml" <<'EOT'
# The server's dynamic config (read every 10 s): keys as in the server's
# dynamicconfig package, e.g. the one `make test`'s dev server sets:
limit.maxIDLength:
  - value: 255
EOT
}

cli() { "$CLI" "$@" --address "127.0.0.1:$PORT_FRONTEND"; }

temporal_serving() { cli operator cluster health 2>/dev/null | grep -q SERVING; }

temporal_start() {
  local d=$1 pid
  alive "$d/temporal/server.pid" && return 0
  answers "$PORT_FRONTEND" && die "port $PORT_FRONTEND (Temporal frontend) is taken by another process"
  temporal_config "$d"
  # setsid: the server outlives this shell, in its own process group.
  setsid "$BINS/server" --root "$d/temporal" --config config --env cluster --allow-no-auth start \
    </dev/null >>"$d/temporal/server.log" 2>&1 &
  pid=$!
  echo "$pid" >"$d/temporal/server.pid"
  if ! wait_for "$START_TIMEOUT" temporal_up "$pid"; then
    tail -20 "$d/temporal/server.log" >&2
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$d/temporal/server.pid"
    die "the Temporal server did not answer on 127.0.0.1:$PORT_FRONTEND (log $d/temporal/server.log)"
  fi
}

# temporal_up PID: the frontend answers health checks; 2 (stop waiting)
# when the process died.
temporal_up() {
  kill -0 "$1" 2>/dev/null || return 2
  temporal_serving
}

# temporal_stop DIR SIGNAL: the server drains its services on SIGTERM.
temporal_stop() {
  local d=$1 sig=${2:-TERM} pid
  alive "$d/temporal/server.pid" || { rm -f "$d/temporal/server.pid"; return 0; }
  pid=$(cat "$d/temporal/server.pid")
  kill -"$sig" -- "-$pid" 2>/dev/null || kill -"$sig" "$pid" 2>/dev/null || true
  wait_for 60 gone "$pid" || {
    kill -KILL -- "-$pid" 2>/dev/null || true
    wait_for 10 gone "$pid" || true
  }
  rm -f "$d/temporal/server.pid"
}

# namespace DIR: the namespace "default" and the session's search
# attributes, registered once (a new namespace reaches every frontend's
# cache within seconds, hence the retries).
namespace() {
  local d=$1 sa name type have
  if ! cli operator namespace describe --namespace default >/dev/null 2>&1; then
    cli operator namespace create --namespace default --retention 72h >>"$d/temporal/setup.log" 2>&1 ||
      die "temporal operator namespace create failed (log $d/temporal/setup.log)"
  fi
  for sa in $SEARCH_ATTRIBUTES; do
    name=${sa%=*} type=${sa#*=}
    have=""
    for _ in $(seq 1 60); do
      cli operator search-attribute list --namespace default 2>/dev/null | grep -qw "$name" && { have=1; break; }
      cli operator search-attribute create --namespace default --name "$name" --type "$type" >>"$d/temporal/setup.log" 2>&1 || true
      sleep 1
    done
    [ -n "$have" ] || die "search attribute $name could not be registered (log $d/temporal/setup.log)"
  done
}

# ---------------------------------------------------------------- Neo4j

neo4j() { NEO4J_PASSWORD="$NEO4J_PASSWORD" bash "$ROOT/scripts/neo4j.sh" "$@"; }

neo4j_start() { neo4j start "$1/neo4j" "$PORT_NEO4J" >&2; }

# ---------------------------------------------------------------- env and workers

write_env() {
  local d=$1 tq=${LETHE_TEMPORAL_TASK_QUEUE:-lethe}
  cat >"$d/env.tmp" <<EOF2
export LETHE_TEMPORAL_HOST_PORT=127.0.0.1:$PORT_FRONTEND
export LETHE_TEMPORAL_NAMESPACE=default
export LETHE_TEMPORAL_TASK_QUEUE=$tq
export LETHE_TEMPORAL_LLM_QUEUE=$tq-llm
export LETHE_TEMPORAL_RESEARCH_QUEUE=$tq-browser
export LETHE_GRAPH_BACKEND=neo4j
export LETHE_GRAPH_NEO4J_URI=bolt://127.0.0.1:$PORT_NEO4J
export LETHE_GRAPH_NEO4J_USER=neo4j
export LETHE_GRAPH_NEO4J_PASSWORD=$NEO4J_PASSWORD
export CLUSTER_DIR=$d
export CLUSTER_PG_PORT=$PORT_PG
export CLUSTER_TEMPORAL_PORT=$PORT_FRONTEND
export CLUSTER_NEO4J_PORT=$PORT_NEO4J
export CLUSTER_TEMPORAL_METRICS=127.0.0.1:$PORT_SERVER_METRICS
EOF2
  chmod 600 "$d/env.tmp"
  mv "$d/env.tmp" "$d/env"
}

# queues_a / queues_b: worker A polls the model and browser queues (the
# slow, resource-bound activities), worker B the workflow queue and the
# search queues.
queues_a() { echo "$LETHE_TEMPORAL_LLM_QUEUE,$LETHE_TEMPORAL_RESEARCH_QUEUE"; }
queues_b() {
  local q=$LETHE_TEMPORAL_TASK_QUEUE p
  for p in $WEB_PROVIDERS; do q="$q,$LETHE_TEMPORAL_TASK_QUEUE-search-$p"; done
  echo "$q"
}

# worker_start DIR NAME BIN QUEUES METRICS_PORT
worker_start() {
  local d=$1 name=$2 bin=$3 queues=$4 port=$5 pid
  alive "$d/worker-$name.pid" && return 0
  answers "$port" && die "port $port (worker $name's metrics) is taken by another process"
  LETHE_TELEMETRY_METRICS_ADDR=127.0.0.1:$port setsid "$bin" --queues "$queues" </dev/null >>"$d/worker-$name.log" 2>&1 &
  pid=$!
  echo "$pid" >"$d/worker-$name.pid"
}

# pollers QUEUE: the queue has a poller (a worker started its polls).
pollers() {
  cli task-queue describe --namespace default --task-queue "$1" --task-queue-type "$2" 2>/dev/null | grep -q '[0-9a-f]@'
}

workers() {
  local d=$1 bin=${2:-} name
  [ -f "$d/env" ] || die "no cluster in $d (run: scripts/cluster.sh up $d)"
  # shellcheck disable=SC1091
  . "$d/env"
  if [ -z "$bin" ]; then
    bin="$d/bin/worker"
    (cd "$ROOT" && go build -o "$bin" ./worker) || die "go build ./worker failed"
  fi
  [ -x "$bin" ] || die "worker binary $bin is not executable"
  if ! alive "$d/worker-a.pid" && ! alive "$d/worker-b.pid" && [ -z "${LETHE_LLM_BASE_URL:-}" ] && [ -z "${LETHE_CONFIG:-}" ]; then
    say "no model configured (LETHE_LLM_BASE_URL unset): the workers call 127.0.0.1:8080 and :8081; scripts/models.sh starts local ones"
  fi
  worker_start "$d" a "$bin" "$(queues_a)" "$PORT_WORKER_A_METRICS"
  worker_start "$d" b "$bin" "$(queues_b)" "$PORT_WORKER_B_METRICS"
  for name in a b; do
    if ! wait_for 60 worker_up "$d" "$name"; then
      tail -15 "$d/worker-$name.log" >&2
      die "worker $name did not start polling (log $d/worker-$name.log)"
    fi
  done
  say "worker A polls $(queues_a)"
  say "worker B polls $(queues_b)"
}

# worker_up DIR NAME: alive and polling its first queue.
worker_up() {
  local d=$1 name=$2 q type=activity
  alive "$d/worker-$name.pid" || return 2
  if [ "$name" = a ]; then q=$LETHE_TEMPORAL_LLM_QUEUE; else q=$LETHE_TEMPORAL_TASK_QUEUE type=workflow; fi
  pollers "$q" "$type"
}

workers_stop() {
  local d=$1 name pid
  for name in a b; do
    alive "$d/worker-$name.pid" || { rm -f "$d/worker-$name.pid"; continue; }
    pid=$(cat "$d/worker-$name.pid")
    # The group: the worker's browsers go with it.
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  done
  for name in a b; do
    [ -f "$d/worker-$name.pid" ] || continue
    pid=$(cat "$d/worker-$name.pid")
    wait_for 30 gone "$pid" || kill -KILL -- "-$pid" 2>/dev/null || true
    rm -f "$d/worker-$name.pid"
  done
}

# ---------------------------------------------------------------- commands

# prepare DIR [new]: DIR's ports and secrets; only `up` makes a new cluster.
prepare() {
  D=$(datadir "${1:-}")
  [ -f "$D/ports" ] || [ "${2:-}" = new ] || die "no cluster in $D (run: scripts/cluster.sh up $D)"
  ports "$D"
  secrets "$D"
}

up() {
  prepare "${1:-}" new
  deps
  BINS=$(server_bins)
  pg_init "$D"
  pg_start "$D"
  schema "$D"
  temporal_start "$D"
  namespace "$D"
  neo4j_start "$D"
  write_env "$D"
}

addresses() {
  local d=$1
  cat <<EOF
Temporal frontend  127.0.0.1:$PORT_FRONTEND (namespace default; HTTP 127.0.0.1:$PORT_FRONTEND_HTTP; metrics http://127.0.0.1:$PORT_SERVER_METRICS/metrics; log $d/temporal/server.log)
PostgreSQL         127.0.0.1:$PORT_PG (user temporal; databases temporal, temporal_visibility; log $d/pg/server.log)
Neo4j              bolt://127.0.0.1:$PORT_NEO4J (user neo4j; data $d/neo4j)
$(worker_line "$d" a "$PORT_WORKER_A_METRICS")
$(worker_line "$d" b "$PORT_WORKER_B_METRICS")
Environment        . $d/env   (the passwords are in $d/secrets)
Stop               bash scripts/cluster.sh stop $d
EOF
}

worker_line() {
  local d=$1 name=$2 port=$3
  if alive "$d/worker-$name.pid"; then
    echo "Worker ${name^^}           pid $(cat "$d/worker-$name.pid"), metrics http://127.0.0.1:$port/metrics, log $d/worker-$name.log"
  else
    echo "Worker ${name^^}           not running (scripts/cluster.sh workers $d)"
  fi
}

# component_stop DIR C SIGNAL: TERM is a clean stop, KILL a crash.
component_stop() {
  local d=$1 c=$2 sig=$3
  case "$c" in
    temporal) temporal_stop "$d" "$sig" ;;
    postgres) if [ "$sig" = KILL ]; then pg_kill "$d"; else pg_stop "$d"; fi ;;
    neo4j) if [ "$sig" = KILL ]; then neo4j kill "$d/neo4j" >&2; else neo4j stop "$d/neo4j" >&2; fi ;;
    *) die "unknown component '$c' (temporal, postgres or neo4j)" ;;
  esac
}

restart() {
  local c=$1
  prepare "${2:-}"
  component_stop "$D" "$c" TERM
  case "$c" in
    temporal) BINS=$(server_bins); temporal_start "$D" ;;
    postgres) pg_start "$D" ;;
    neo4j) neo4j_start "$D" ;;
  esac
  say "$c restarted"
}

stop() {
  [ -f "$(datadir "${1:-}")/ports" ] || { say "no cluster in $(datadir "${1:-}")"; return 0; }
  prepare "${1:-}"
  workers_stop "$D"
  temporal_stop "$D" TERM
  neo4j stop "$D/neo4j" >&2
  pg_stop "$D"
  say "stopped (data kept in $D)"
}

status() {
  local rc=0 name
  prepare "${1:-}"
  for name in a b; do
    if alive "$D/worker-$name.pid"; then echo "worker $name     running (pid $(cat "$D/worker-$name.pid"))"; else echo "worker $name     stopped"; fi
  done
  if alive "$D/temporal/server.pid"; then
    echo "temporal     running (pid $(cat "$D/temporal/server.pid"), 127.0.0.1:$PORT_FRONTEND)"
  else echo "temporal     stopped"; rc=1; fi
  if [ -f "$D/pg/PG_VERSION" ] && pg_running "$D"; then
    echo "postgres     running (pid $(head -1 "$D/pg/postmaster.pid"), 127.0.0.1:$PORT_PG)"
  else echo "postgres     stopped"; rc=1; fi
  if neo4j status "$D/neo4j" >/dev/null 2>&1; then
    echo "neo4j        running (pid $(cat "$D/neo4j/neo4j.pid"), bolt://127.0.0.1:$PORT_NEO4J)"
  else echo "neo4j        stopped"; rc=1; fi
  return $rc
}

usage="usage: scripts/cluster.sh up|workers|start|restart|kill|stop|status|env (see the head of the script)"
cmd="${1:-}"
shift || true
case "$cmd" in
  up) up "$@"; addresses "$D" ;;
  workers) prepare "${1:-}"; workers "$D" "${2:-}" ;;
  start) up "${1:-}"; workers "$D"; addresses "$D" ;;
  restart) [ $# -ge 1 ] || die "$usage"; restart "$@" ;;
  kill) [ $# -ge 1 ] || die "$usage"; prepare "${2:-}"; component_stop "$D" "$1" KILL ;;
  stop) stop "$@" ;;
  status) status "$@" ;;
  env) prepare "${1:-}"; [ -f "$D/env" ] || die "no cluster in $D"; cat "$D/env" ;;
  *) die "$usage" ;;
esac
