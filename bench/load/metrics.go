package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// persistenceCounter is the dev server's count of persistence operations
// (every database read and write of every service): a cost per session
// that, unlike CPU time, a loaded machine does not inflate.
const persistenceCounter = "persistence_requests"

// scrape reads the text exposition at url.
func scrape(ctx context.Context, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("scrape %s: %w", url, err)
	}
	return string(b), nil
}

// sumCounter adds the values of name's series in a text exposition, by
// the series' operation label and in total (key "").
func sumCounter(text, name string) map[string]float64 {
	sums := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue // another metric with this prefix (name_total, name_bucket)
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			sums[""] += v
			sums[label(rest, "operation")] += v
		}
	}
	return sums
}

// label is the value of key in a series' {k="v",...} label set.
func label(series, key string) string {
	_, after, ok := strings.Cut(series, key+`="`)
	if !ok {
		return "(none)"
	}
	v, _, _ := strings.Cut(after, `"`)
	return v
}

// opsTable lists the operations of after - before, most first, per session.
func opsTable(before, after map[string]float64, n int) string {
	type op struct {
		name string
		per  float64
	}
	var ops []op
	for k, v := range after {
		if k != "" && v > before[k] {
			ops = append(ops, op{k, (v - before[k]) / float64(n)})
		}
	}
	sort.Slice(ops, func(i, j int) bool {
		return ops[i].per > ops[j].per || ops[i].per == ops[j].per && ops[i].name < ops[j].name
	})
	var b strings.Builder
	fmt.Fprintf(&b, "persistence operations per session (%d sessions)\n", n)
	for _, o := range ops {
		fmt.Fprintf(&b, "%8.1f  %s\n", o.per, o.name)
	}
	return b.String()
}

// transitions counts the writes of workflow state (one per state
// transition the history service commits): unlike the other operations,
// which include the server's polling and refreshes over time, they depend
// on the sessions alone.
func transitions(ops map[string]float64) float64 {
	return ops["CreateWorkflowExecution"] + ops["UpdateWorkflowExecution"]
}
