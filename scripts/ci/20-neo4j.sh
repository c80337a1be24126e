# A real Neo4j 5 server for the graph/neo4j conformance suite and the e2e
# tests that use graph.backend=neo4j. Sourced by .ci/run (which defines
# apt_install and CLEANUP). Neo4j comes from Maven Central through
# scripts/neo4j.sh (built once, cached under $LETHE_CACHE/neo4j-<version>).
command -v java >/dev/null && command -v mvn >/dev/null || apt_install openjdk-17-jdk-headless maven
NEO4J_CI_DIR="$PWD/lethe-data/neo4j-ci"
rm -rf "$NEO4J_CI_DIR"
NEO4J_CI_PORT=17687
while (exec 3<>"/dev/tcp/127.0.0.1/$NEO4J_CI_PORT") 2>/dev/null; do NEO4J_CI_PORT=$((NEO4J_CI_PORT + 1)); done
export NEO4J_PASSWORD="lethe-ci-$RANDOM$RANDOM"
bash scripts/neo4j.sh start "$NEO4J_CI_DIR" "$NEO4J_CI_PORT"
CLEANUP+=("bash scripts/neo4j.sh stop '$NEO4J_CI_DIR'")
export LETHE_TEST_NEO4J_URI="bolt://127.0.0.1:$NEO4J_CI_PORT"
export LETHE_TEST_NEO4J_USER=neo4j
export LETHE_TEST_NEO4J_PASSWORD="$NEO4J_PASSWORD"
