package activities

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/llm"
)

// secretBase is a model server's base URL that carries its credentials, as
// some proxies take them; nothing listens on port 1.
const secretBase = "http://alice:s3cret-pass@127.0.0.1:1/v1?key=K3Y-SECRET"

func leaks(s string) bool {
	return strings.Contains(s, "s3cret-pass") || strings.Contains(s, "K3Y-SECRET")
}

// TestFailureHistoryRedactsURLCredentials: an activity failing against that
// server records, in the failure that goes into workflow history (every
// message of its cause chain and the outage details), no credential.
func TestFailureHistoryRedactsURLCredentials(t *testing.T) {
	ctx := context.Background()
	embed := llm.NewEmbedClient(llm.EmbedConfig{BaseURL: secretBase}, nil)
	_, down := embed.Embed(ctx, llm.Document, []string{"x"})
	if down == nil {
		t.Fatal("the embedding call succeeded")
	}
	for name, err := range map[string]error{
		"outage":    redactFailure(Classify(ctx, down)),
		"permanent": redactFailure(Classify(ctx, nonRetryable(ErrLLM, down))),
		"transient": redactFailure(Classify(ctx, errors.Join(errors.New("ingest"), &llm.HTTPError{Status: 502, URL: secretBase}))),
	} {
		f := temporal.GetDefaultFailureConverter().ErrorToFailure(err)
		if leaks(f.String()) {
			t.Errorf("%s: the recorded failure holds the credentials:\n%s", name, f.String())
		}
		if !strings.Contains(f.String(), "127.0.0.1:1") {
			t.Errorf("%s: the failure no longer names the server:\n%s", name, f.String())
		}
	}
	var app *temporal.ApplicationError
	if err := redactFailure(Classify(ctx, down)); !errors.As(err, &app) || app.Type() != ErrModelUnavailable {
		t.Fatalf("the outage lost its type: %v", err)
	}
	var o Outage
	if err := app.Details(&o); err != nil || leaks(o.URL+o.Error) || o.URL == "" {
		t.Fatalf("outage details %+v (%v)", o, err)
	}
}

// TestResolvedConfigRedactsURLCredentials: the config a session resolves is
// recorded in its history; the worker's credentials in base URLs are not.
func TestResolvedConfigRedactsURLCredentials(t *testing.T) {
	a := &Activities{Sources: load.Sources{Env: []string{
		"LETHE_LLM_BASE_URL=" + secretBase, "LETHE_EMBED_BASE_URL=" + secretBase,
		"LETHE_RESEARCH_SEARXNG_URL=https://search.example/?token=K3Y-SECRET",
		"LETHE_GRAPH_NEO4J_URI=bolt://neo4j:s3cret-pass@127.0.0.1:7687",
	}}}
	c, err := a.ResolveConfig(context.Background(), ResolveConfigInput{})
	if err != nil {
		t.Fatal(err)
	}
	if leaks(c.LLM.BaseURL + c.Embed.BaseURL + c.Research.SearxngURL + c.Graph.Neo4jURI) {
		t.Fatalf("resolved config holds credentials: %q %q %q %q", c.LLM.BaseURL, c.Embed.BaseURL, c.Research.SearxngURL, c.Graph.Neo4jURI)
	}
	if !strings.HasPrefix(c.LLM.BaseURL, "http://REDACTED@127.0.0.1:1/v1") {
		t.Fatalf("base URL %q", c.LLM.BaseURL)
	}
}
