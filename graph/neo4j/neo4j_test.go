package neo4j_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/graphtest"
	"github.com/lethe-research/lethe/graph/neo4j"
	"github.com/lethe-research/lethe/internal/lethetest"
)

// serverConfig is the real server the tests run against, from
// LETHE_TEST_NEO4J_URI / _USER / _PASSWORD (`make test` starts one and
// exports them; so does `make neo4j` with `scripts/neo4j.sh env`). The tests
// skip only when LETHE_TEST_SKIP names neo4j, or in a plain `go test`
// without a server; under `make test` or CI a missing server fails them.
func serverConfig(t *testing.T) neo4j.Config {
	t.Helper()
	lethetest.Need(t, lethetest.Neo4j)
	uri := os.Getenv("LETHE_TEST_NEO4J_URI")
	if uri == "" {
		lethetest.Missing(t, lethetest.Neo4j, "LETHE_TEST_NEO4J_URI is not set (`make neo4j` starts a server, `scripts/neo4j.sh env` prints it)")
	}
	user := os.Getenv("LETHE_TEST_NEO4J_USER")
	if user == "" {
		user = "neo4j"
	}
	// The worker's label batch: new items wait outside the index, as in
	// production, and every read must still see them.
	return neo4j.Config{URI: uri, User: user, Password: os.Getenv("LETHE_TEST_NEO4J_PASSWORD"), Database: os.Getenv("LETHE_TEST_NEO4J_DATABASE"),
		LabelBatch: config.Defaults().Graph.Neo4jLabelBatch}
}

// cypherOf runs statements on the server directly, past the store: to
// write a node as another binary would, or to read its labels.
func cypherOf(t *testing.T, cfg neo4j.Config) func(q string, params map[string]any) []*driver.Record {
	t.Helper()
	drv, err := driver.NewDriverWithContext(cfg.URI, driver.BasicAuth(cfg.User, cfg.Password, ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drv.Close(context.Background()) })
	return func(q string, params map[string]any) []*driver.Record {
		t.Helper()
		res, err := driver.ExecuteQuery(t.Context(), drv, q, params, driver.EagerResultTransformer, driver.ExecuteQueryWithDatabase(cfg.Database))
		if err != nil {
			t.Fatal(err)
		}
		return res.Records
	}
}

func open(t *testing.T, cfg neo4j.Config) *neo4j.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s, err := neo4j.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestConformance runs the shared suite against the real server with one
// store (one driver, one connection pool) for every subtest, as a worker
// uses it.
func TestConformance(t *testing.T) {
	cfg := serverConfig(t)
	cfg.WalkCacheMiB = 128   // the worker's default: every shape read checks the cache
	cfg.VectorStatements = 2 // the worker's default: a sync's queries split in two
	s := open(t, cfg)
	graphtest.Run(t, func(t *testing.T) graph.Store { return s })
}

// TestReopen checks that a second Open (schema setup again, on an existing
// schema) works and sees what the first store wrote.
func TestReopen(t *testing.T) {
	cfg := serverConfig(t)
	ctx := context.Background()
	a := open(t, cfg)
	sid := "reopen-" + time.Now().Format("150405.000000000")
	t.Cleanup(func() { _ = a.ResetSession(context.Background(), sid) })
	if err := a.CreateSession(ctx, graph.Session{ID: sid, Goal: "g", GoalDocEmb: graphtest.Unit(0)}, graph.Task{Embedding: graphtest.Unit(0)}); err != nil {
		t.Fatal(err)
	}
	b := open(t, cfg)
	got, err := b.GetSession(ctx, sid)
	if err != nil || got.Goal != "g" || got.Dim != graphtest.Dim {
		t.Fatalf("session through a second store = %+v, %v", got, err)
	}
}

func TestAuthFailure(t *testing.T) {
	cfg := serverConfig(t)
	cfg.Password += "-wrong"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := neo4j.Open(ctx, cfg)
	if err == nil {
		_ = s.Close()
		t.Fatal("Open with a wrong password succeeded")
	}
	if !errors.Is(err, neo4j.ErrUnauthorized) || errors.Is(err, neo4j.ErrUnreachable) {
		t.Fatalf("error %v, want ErrUnauthorized", err)
	}
	if !strings.Contains(err.Error(), cfg.URI) || !strings.Contains(err.Error(), cfg.User) {
		t.Fatalf("error %q does not name the URI and the user", err)
	}
}

// TestUnreachable needs no server: it dials a loopback port nobody listens on.
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	uri := "bolt://" + addr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	s, err := neo4j.Open(ctx, neo4j.Config{URI: uri, User: "neo4j", Password: "whatever-password"})
	if err == nil {
		_ = s.Close()
		t.Fatal("Open of a closed port succeeded")
	}
	if !errors.Is(err, neo4j.ErrUnreachable) {
		t.Fatalf("error %v, want ErrUnreachable", err)
	}
	if !strings.Contains(err.Error(), uri) {
		t.Fatalf("error %q does not name the URI", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("Open took %s to fail", d)
	}
	if _, err := neo4j.Open(ctx, neo4j.Config{URI: "http://" + addr}); err == nil {
		t.Fatal("Open of an http:// URI succeeded")
	}
}
