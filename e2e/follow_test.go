package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/activities"
)

// followPage is a page of the following-crawl site: a paragraph about the
// goal's subject and links.
func followPage(title, text string, links ...string) webPage {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html><html><head><title>%s</title></head><body><nav><a href=\"/\">home</a></nav><main><h1>%s</h1><p>%s</p><ul>", title, title, text)
	for i := 0; i+1 < len(links); i += 2 {
		fmt.Fprintf(&b, "<li><a href=%q>%s</a></li>", links[i], links[i+1])
	}
	b.WriteString("</ul></main></body></html>")
	return webPage{title: title, paras: []string{text}, raw: b.String()}
}

// TestWebResearchFollowsLinks: search finds one page; the links on it
// enter the queue (depth 1) and are fetched, the links on those do not
// (depth 2, research.follow_depth = 1). A hostile link to a private
// address is refused by the URL policy before any connection, and a
// file:// link never enters the queue.
func TestWebResearchFollowsLinks(t *testing.T) {
	needChromium(t)
	text := "Solid-state batteries fail through lithium dendrites that grow along grain boundaries and short the cell."
	s := &webSite{pages: map[string]webPage{
		"/start.html": followPage("Battery failure overview", text,
			"/depth1.html", "How dendrites short solid-state battery cells",
			"http://10.255.255.1/private.html", "Solid-state battery failure data",
			"file:///etc/passwd", "battery failure notes"),
		"/depth1.html": followPage("Dendrites in solid electrolytes", "Dendrites penetrate garnet electrolytes at high current density and cause short circuits.",
			"/depth2.html", "Dendrite growth in solid-state battery electrolytes"),
		"/depth2.html": followPage("Depth two", "Never fetched: two hops from a search result."),
	}, order: []string{"/start.html"}, pathHits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	s.serveSearch(t, http.HandlerFunc(s.serve))
	s.params = map[string]string{"research.follow_depth": "1", "research.max_pages": "8", "research.batch_size": "2"}

	o := runWebSession(t, "follow-links", s, nil)
	s.mu.Lock()
	hits := fmt.Sprint(s.pathHits)
	start, d1, d2 := s.pathHits["/start.html"], s.pathHits["/depth1.html"], s.pathHits["/depth2.html"]
	s.mu.Unlock()
	t.Logf("page requests: %s", hits)
	if start == 0 || d1 == 0 || d2 != 0 {
		t.Errorf("page requests %s: want the search result and its link (depth 1), not the link's link (depth 2)", hits)
	}
	c := dial(t)
	var private []activities.PageRef
	for _, e := range o.history.Events {
		a := e.GetChildWorkflowExecutionCompletedEventAttributes()
		if a == nil {
			continue
		}
		for _, ce := range history(t, c, a.GetWorkflowExecution().GetWorkflowId(), a.GetWorkflowExecution().GetRunId()).GetEvents() {
			r := ce.GetActivityTaskCompletedEventAttributes()
			if r == nil || len(r.GetResult().GetPayloads()) == 0 {
				continue
			}
			var fr activities.FetchResult
			json.Unmarshal(r.GetResult().GetPayloads()[0].GetData(), &fr)
			for _, p := range fr.Pages {
				if strings.HasPrefix(p.URL, "file:") {
					t.Errorf("a file:// link was queued and fetched: %+v", p)
				}
				if strings.Contains(p.URL, "10.255.255.1") {
					private = append(private, p)
				}
			}
		}
	}
	if len(private) == 0 {
		t.Errorf("the link to a private address was not followed at all: want it refused by the policy")
	}
	for _, p := range private {
		if !strings.Contains(p.Error, "refusing") {
			t.Errorf("private address: %q, want the policy's refusal", p.Error)
		}
	}
	if o.res.StopReason == "" {
		t.Errorf("session result %+v", o.res)
	}
}
