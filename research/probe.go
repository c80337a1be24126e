package research

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/lethe-research/lethe/config"
)

// ProbeTimeout bounds one provider probe: a health check, not a search.
const ProbeTimeout = 5 * time.Second

// Prober is a search provider that can say whether its service answers.
type Prober interface {
	// Probe sends one GET to the provider's base URL (no query, no key, so
	// it costs no quota) and reports an error when no HTTP answer comes
	// within ProbeTimeout. Any HTTP status counts as an answer: the probe
	// asks whether the service is reachable, not whether a search works.
	Probe(ctx context.Context) error
	// BaseURL is the URL the probe asks.
	BaseURL() string
}

func probe(ctx context.Context, hc *http.Client, base *url.URL) error {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.String()+"/", nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err // names the method and URL
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.Body.Close()
}

func (w *webAPI) Probe(ctx context.Context) error { return probe(ctx, w.hc, w.base) }
func (w *webAPI) BaseURL() string                 { return config.RedactURL(w.base.String()) }

// Probe implements Prober.
func (p *Wikipedia) Probe(ctx context.Context) error { return p.api.Probe(ctx) }

// BaseURL implements Prober.
func (p *Wikipedia) BaseURL() string { return p.api.BaseURL() }

// Probe implements Prober.
func (p *Arxiv) Probe(ctx context.Context) error { return p.api.Probe(ctx) }

// BaseURL implements Prober.
func (p *Arxiv) BaseURL() string { return p.api.BaseURL() }

// Probe implements Prober.
func (p *Tavily) Probe(ctx context.Context) error { return p.api.Probe(ctx) }

// BaseURL implements Prober.
func (p *Tavily) BaseURL() string { return p.api.BaseURL() }

// Probe implements Prober.
func (p *Brave) Probe(ctx context.Context) error { return p.api.Probe(ctx) }

// BaseURL implements Prober.
func (p *Brave) BaseURL() string { return p.api.BaseURL() }

// Probe implements Prober.
func (s *SearXNG) Probe(ctx context.Context) error { return probe(ctx, s.hc, s.base) }

// BaseURL implements Prober.
func (s *SearXNG) BaseURL() string { return config.RedactURL(s.base.String()) }
