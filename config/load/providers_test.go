package load

import "testing"

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
