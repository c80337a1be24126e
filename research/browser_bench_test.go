package research

import (
	"context"
	"fmt"
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
