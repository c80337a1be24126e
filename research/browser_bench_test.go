package research

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"
)

// BenchmarkBrowserPages fetches 16 pages of the loopback site (each with a
// script that writes part of its text) per iteration with 1, 2 and 4 tabs,
// in one browser context per iteration as the Fetch activity does, and
// reports pages per minute. Run: go test -run '^$' -bench BrowserPages
// -benchtime 3x ./research/
func BenchmarkBrowserPages(b *testing.B) {
	site := newTestSite(b, nil)
	urls := make([]string, 16)
	for i := range urls {
		urls[i] = fmt.Sprintf("%s/page/%d", site.URL, i)
	}
	for _, tabs := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("tabs=%d", tabs), func(b *testing.B) {
			br := newTestBrowser(b, URLPolicy{AllowLoopback: true}, tabs, nil)
			if r := br.FetchAll(context.Background(), urls[:1], nil); r[0].Err != nil { // starts Chromium
				b.Fatal(r[0].Err)
			}
			pages := 0
			start := time.Now()
			for b.Loop() {
				for i, r := range br.FetchAll(context.Background(), urls, nil) {
					if r.Err != nil {
						b.Fatalf("%s: %v", urls[i], r.Err)
					}
				}
				pages += len(urls)
			}
			b.ReportMetric(float64(pages)/time.Since(start).Minutes(), "pages/min")
		})
	}
}

// BenchmarkBrowserTabReuse measures the per-page time of a research run
// whose batches reuse the run's browser context and tabs (FetchRun with
// the run's key) against pages that each get a fresh context and tab (the
// fetcher before tab reuse opened a tab per page and a context per
// batch), one page per call as a run's batches arrive, alternating the
// two in rounds in one process with one Chromium; it reports the median
// per-page time of each and their ratio. Run: go test -run '^$' -bench
// BrowserTabReuse -benchtime 1x ./research/
func BenchmarkBrowserTabReuse(b *testing.B) {
	site := newTestSite(b, nil)
	const pages, rounds = 8, 5
	br := newTestBrowser(b, URLPolicy{AllowLoopback: true}, 1, nil)
	if r := br.FetchAll(context.Background(), []string{site.URL + "/page/0"}, nil); r[0].Err != nil { // starts Chromium
		b.Fatal(r[0].Err)
	}
	perPage := func(run func(i int) string) time.Duration {
		start := time.Now()
		for i := 0; i < pages; i++ {
			u := fmt.Sprintf("%s/page/%d", site.URL, i)
			if r := br.FetchRun(context.Background(), run(i), []string{u}, nil); r[0].Err != nil {
				b.Fatalf("%s: %v", u, r[0].Err)
			}
		}
		return time.Since(start) / pages
	}
	var fresh, reused []time.Duration
	for b.Loop() {
		for r := 0; r < rounds; r++ {
			fresh = append(fresh, perPage(func(int) string { return "" }))
			key := fmt.Sprintf("bench-run-%d", r)
			reused = append(reused, perPage(func(int) string { return key }))
		}
	}
	mf, mr := medianDuration(fresh), medianDuration(reused)
	b.Logf("per page, median of %d rounds of %d pages: fresh tab %s, reused tab %s, ratio %.2f (fresh %v, reused %v)",
		len(fresh), pages, mf, mr, float64(mr)/float64(mf), fresh, reused)
	b.ReportMetric(float64(mf.Milliseconds()), "ms/page-fresh")
	b.ReportMetric(float64(mr.Milliseconds()), "ms/page-reused")
	b.ReportMetric(float64(mr)/float64(mf), "ratio")
}

func medianDuration(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
