package config

import (
	"fmt"
	"slices"
	"strings"
)

// Search provider names (research.providers).
const (
	ProviderCorpus    = "corpus"
	ProviderSearXNG   = "searxng"
	ProviderWikipedia = "wikipedia"
	ProviderArxiv     = "arxiv"
	ProviderTavily    = "tavily"
	ProviderBrave     = "brave"
	// ProvidersAuto resolves from the recorded config: the corpus when
	// corpus_dir is set, then SearXNG when searxng_url is set.
	ProvidersAuto = "auto"
	// ProvidersNone: no search at all (web_search calls find nothing).
	ProvidersNone = "none"
)

// WebProviders are the provider families that reach a third party: each
// has its own rate-limited task queue (Temporal.QueueSearch).
func WebProviders() []string {
	return []string{ProviderSearXNG, ProviderWikipedia, ProviderArxiv, ProviderTavily, ProviderBrave}
}

// ProviderList is the fallback chain of research.providers: the named
// providers in order, lowercased and deduplicated; auto resolved from
// corpus_dir and searxng_url alone, so that workflow code derives the same
// list on replay (keys are not in the recorded config, so keyed providers
// are never chosen automatically).
func (r Research) ProviderList() []string {
	spec := strings.ToLower(strings.TrimSpace(r.Providers))
	var out []string
	add := func(p string) {
		if p != "" && p != ProvidersNone && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if f == ProvidersAuto || (f == "" && spec == "") {
			if r.CorpusDir != "" {
				add(ProviderCorpus)
			}
			if r.SearxngURL != "" {
				add(ProviderSearXNG)
			}
			continue
		}
		add(f)
	}
	return out
}

// validateProviders: every name in research.providers is known.
func (r Research) validateProviders() error {
	known := append([]string{ProviderCorpus, ProvidersAuto, ProvidersNone}, WebProviders()...)
	for _, f := range strings.Split(r.Providers, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f != "" && !slices.Contains(known, f) {
			return fmt.Errorf("config: research.providers: unknown provider %q (known: %s)", f, strings.Join(known, ", "))
		}
	}
	return nil
}

// RateOf is the Discover rate (calls per second) of a web provider's
// queue; 0 for the corpus (local, not limited).
func (r Research) RateOf(provider string) float64 {
	switch provider {
	case ProviderSearXNG:
		return r.Rate.SearXNG
	case ProviderWikipedia:
		return r.Rate.Wikipedia
	case ProviderArxiv:
		return r.Rate.Arxiv
	case ProviderTavily:
		return r.Rate.Tavily
	case ProviderBrave:
		return r.Rate.Brave
	}
	return 0
}

// QueueSearch is the task queue of a provider's Discover calls: a web
// provider family has its own queue, <task_queue>-search-<provider>, whose
// rate the workers set (research.rate.<provider>); the local corpus runs
// on task_queue.
func (t Temporal) QueueSearch(provider string) string {
	if !slices.Contains(WebProviders(), provider) {
		return t.TaskQueue
	}
	return t.TaskQueue + "-search-" + provider
}
