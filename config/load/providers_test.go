package load

import (
	"strings"
	"testing"
)

// The search parameters load from LETHE_* names like every other one:
// nested rates (research.rate.arxiv) and keys included.
func TestSearchParamsFromEnv(t *testing.T) {
	c, err := Load(Sources{Env: []string{"LETHE_RESEARCH_PROVIDERS=brave,arxiv", "LETHE_RESEARCH_RATE_ARXIV=0.5", "LETHE_RESEARCH_BRAVE_API_KEY=k"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Research.Providers != "brave,arxiv" || c.Research.RateOf("arxiv") != 0.5 || c.Research.RateOf("brave") != 1 || c.Research.BraveAPIKey != "k" {
		t.Errorf("providers %q rates %+v key set %v", c.Research.Providers, c.Research.Rate, c.Research.BraveAPIKey != "")
	}
	if _, err := Load(Sources{Env: []string{"LETHE_RESEARCH_PROVIDERS=bing"}}); err == nil {
		t.Error("an unknown provider loaded")
	}
}

// The API keys also load from the names other tools use (TAVILY_API_KEY,
// BRAVE_API_KEY); the LETHE_* name wins when both are set; a key passed as
// a session parameter is refused with the names to use instead.
func TestSearchKeysCommonEnv(t *testing.T) {
	for _, tc := range []struct {
		name          string
		env           []string
		tavily, brave string
	}{
		{"common names", []string{"TAVILY_API_KEY=tv", "BRAVE_API_KEY=br"}, "tv", "br"},
		{"LETHE_* wins", []string{"TAVILY_API_KEY=tv", "LETHE_RESEARCH_TAVILY_API_KEY=lt", "BRAVE_API_KEY=br"}, "lt", "br"},
		{"LETHE_* wins in either order", []string{"LETHE_RESEARCH_BRAVE_API_KEY=lb", "BRAVE_API_KEY=br"}, "", "lb"},
		{"an empty common name is unset", []string{"TAVILY_API_KEY="}, "", ""},
		{"none", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(Sources{Env: append([]string{"HOME=/nonexistent"}, tc.env...)})
			if err != nil {
				t.Fatal(err)
			}
			if c.Research.TavilyAPIKey != tc.tavily || c.Research.BraveAPIKey != tc.brave {
				t.Errorf("tavily %q brave %q, want %q %q", c.Research.TavilyAPIKey, c.Research.BraveAPIKey, tc.tavily, tc.brave)
			}
		})
	}
	for _, key := range []string{"research.tavily_api_key", "research.brave_api_key"} {
		_, err := Load(Sources{Env: []string{}, Overrides: map[string]string{key: "secret"}})
		if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "session parameter") ||
			!strings.Contains(err.Error(), CommonKeyEnv[key]) || strings.Contains(err.Error(), "secret\"") {
			t.Errorf("%s as a session parameter: %v", key, err)
		}
	}
	if _, err := Load(Sources{Env: []string{}, Overrides: map[string]string{"research.providers": "tavily"}}); err != nil {
		t.Errorf("a non-secret session parameter refused: %v", err)
	}
}
