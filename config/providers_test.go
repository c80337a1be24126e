package config

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestProviderList(t *testing.T) {
	for _, c := range []struct {
		providers, corpus, searxng string
		want                       []string
	}{
		{"auto", "", "", nil},
		{"auto", "/c", "", []string{"corpus"}},
		{"auto", "/c", "http://s", []string{"corpus", "searxng"}},
		{"", "", "http://s", []string{"searxng"}},
		{"none", "/c", "http://s", nil},
		{"Wikipedia, arxiv ,wikipedia", "/c", "", []string{"wikipedia", "arxiv"}},
		{"searxng,auto,arxiv", "/c", "http://s", []string{"searxng", "corpus", "arxiv"}},
		{"tavily,brave,corpus", "", "", []string{"tavily", "brave", "corpus"}},
	} {
		r := Research{Providers: c.providers, CorpusDir: c.corpus, SearxngURL: c.searxng}
		if got := r.ProviderList(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ProviderList(%q, corpus %q, searxng %q) = %q, want %q", c.providers, c.corpus, c.searxng, got, c.want)
		}
	}
}

func TestProvidersValidated(t *testing.T) {
	c := Defaults()
	c.Research.Providers = "wikipedia,bing"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `unknown provider "bing"`) {
		t.Fatalf("an unknown provider: %v", err)
	}
	c.Research.Providers = "brave, arxiv,none"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.Research.Rate.Wikipedia = 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "research.rate.wikipedia") {
		t.Errorf("a zero rate: %v", err)
	}
	d := Defaults().Research
	if d.RateOf("arxiv") != 0.33 || d.RateOf("brave") != 1 || d.RateOf("corpus") != 0 {
		t.Errorf("default rates %+v", d.Rate)
	}
}

func TestQueueSearch(t *testing.T) {
	tq := Temporal{TaskQueue: "lethe"}
	for p, want := range map[string]string{"wikipedia": "lethe-search-wikipedia", "brave": "lethe-search-brave", "corpus": "lethe"} {
		if got := tq.QueueSearch(p); got != want {
			t.Errorf("QueueSearch(%s) = %s, want %s", p, got, want)
		}
	}
}

func TestSearchKeysStayOutOfHistory(t *testing.T) {
	c := Defaults()
	c.Research.TavilyAPIKey, c.Research.BraveAPIKey = "tvly-secret", "brave-secret"
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "secret") {
		t.Errorf("a search key is in the recorded config: %s", b)
	}
}
