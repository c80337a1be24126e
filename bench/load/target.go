package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lethe-research/lethe/config/load"
)

// target is a Temporal server that a round runs its sessions on: the dev
// server the bench starts for each round, or an external frontend (a
// cluster) that outlives the rounds.
type target struct {
	name string
	// params are the worker parameters the cluster's environment file
	// sets (its frontend, namespace, queues, graph store); nil for the dev
	// server.
	params map[string]string
	// dir is the cluster's data directory (CLUSTER_DIR), where its pid
	// files are; metrics its server's Prometheus address
	// (CLUSTER_TEMPORAL_METRICS). Either may be empty: then the bench
	// reports no server CPU or no server counters.
	dir, metrics string
}

const (
	targetDevServer = "devserver"
	targetCluster   = "cluster"
)

// external reports whether the server is not the bench's own: no dev
// server is started for it, and its CPU and database counters are not
// the bench's to read.
func (t target) external() bool { return t.params != nil }

func (t target) hostPort() string  { return t.params["temporal.host_port"] }
func (t target) namespace() string { return t.params["temporal.namespace"] }

// parseTargets reads -targets: devserver, cluster or both, in that order
// of the list; cluster needs the environment file that scripts/cluster.sh
// writes.
func parseTargets(list, clusterEnv string) ([]target, error) {
	var out []target
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if seen[name] {
			return nil, fmt.Errorf("-targets: %s twice", name)
		}
		seen[name] = true
		switch name {
		case targetDevServer:
			out = append(out, target{name: name})
		case targetCluster:
			if clusterEnv == "" {
				return nil, fmt.Errorf("-targets cluster needs -cluster-env (the env file of scripts/cluster.sh up DIR)")
			}
			b, err := os.ReadFile(clusterEnv)
			if err != nil {
				return nil, fmt.Errorf("-cluster-env: %w", err)
			}
			t, err := clusterTarget(string(b))
			if err != nil {
				return nil, fmt.Errorf("-cluster-env %s: %w", clusterEnv, err)
			}
			out = append(out, t)
		default:
			return nil, fmt.Errorf("-targets: %q is neither %s nor %s", name, targetDevServer, targetCluster)
		}
	}
	return out, nil
}

// clusterTarget reads a cluster's env file: its LETHE_* variables are
// worker parameters, CLUSTER_DIR and CLUSTER_TEMPORAL_METRICS say where
// its processes and counters are, and the cluster's other variables (its
// ports) are not the bench's. The frontend must be there: without it the
// workers would dial the default address, which may be another server.
func clusterTarget(text string) (target, error) {
	env, err := exports(text)
	if err != nil {
		return target{}, err
	}
	params, err := load.EnvKeys(env)
	if err != nil {
		return target{}, err
	}
	if params["temporal.host_port"] == "" {
		return target{}, fmt.Errorf("no %s", load.EnvName("temporal.host_port"))
	}
	if params["temporal.namespace"] == "" {
		params["temporal.namespace"] = "default"
	}
	t := target{name: targetCluster, params: params}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "CLUSTER_DIR":
			t.dir = v
		case "CLUSTER_TEMPORAL_METRICS":
			t.metrics = v
		}
	}
	return t, nil
}

// exports reads a file of shell export lines as KEY=value pairs.
func exports(text string) ([]string, error) {
	var env []string
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			return nil, fmt.Errorf("line %d: %q is not an export KEY=VALUE", i+1, line)
		}
		v, err := shellWord(v)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		env = append(env, strings.TrimSpace(k)+"="+v)
	}
	return env, nil
}

// metricsURL is the server's Prometheus exposition, "" when unknown.
func (t target) metricsURL() string {
	if t.metrics == "" {
		return ""
	}
	return "http://" + t.metrics + "/metrics"
}

// proc is a process of the cluster that the bench samples (its whole
// process tree).
type proc struct {
	name string
	pid  int
}

// The cluster's pid files, in the layout of scripts/cluster.sh's DIR:
// the Temporal server, PostgreSQL's postmaster (its first line), Neo4j.
const (
	serverPidFile   = "temporal/server.pid"
	postgresPidFile = "pg/postmaster.pid"
	neo4jPidFile    = "neo4j/neo4j.pid"
)

// serverPid is the cluster's Temporal server process, 0 when unknown.
// Read at each round, since a restart changes it.
func (t target) serverPid() int { return t.pidFile(serverPidFile) }

// stores are the cluster's database processes: their CPU is the
// cluster's share of what the dev server does in its own process
// (SQLite) and the embedded graph store in the worker's.
func (t target) stores() []proc {
	var out []proc
	for _, p := range []proc{{"postgres", t.pidFile(postgresPidFile)}, {"neo4j", t.pidFile(neo4jPidFile)}} {
		if p.pid > 0 {
			out = append(out, p)
		}
	}
	return out
}

func (t target) pidFile(name string) int {
	if t.dir == "" {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(t.dir, name))
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(first))
	return pid
}

// shellWord unquotes one shell value as an env file writes it: bare,
// 'single' or "double" quoted.
func shellWord(v string) (string, error) {
	switch {
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return v[1 : len(v)-1], nil
	case len(v) >= 2 && v[0] == '"':
		s, err := strconv.Unquote(v)
		if err != nil {
			return "", fmt.Errorf("value %s: %w", v, err)
		}
		return s, nil
	case strings.ContainsAny(v, " '\"$`\\"):
		return "", fmt.Errorf("value %q: only bare or quoted words are read", v)
	}
	return v, nil
}
