package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/lethe-research/lethe/config"
)

// alternate is -alternate: a session config key and the values it takes
// in turn over the timed iterations. Two settings are then compared in
// one process, on one database and at one size: between runs on fresh
// databases the median moved by more than most changes are worth
// (docs/long-session.md, "Two settings in one run").
type alternate struct {
	key    string
	values []string
}

// parseAlternate reads "key=v1,v2[,...]" ("" is no alternation).
func parseAlternate(s string) (alternate, error) {
	if s == "" {
		return alternate{}, nil
	}
	key, vals, ok := strings.Cut(s, "=")
	a := alternate{key: strings.TrimSpace(key)}
	for _, v := range strings.Split(vals, ",") {
		if v = strings.TrimSpace(v); v != "" {
			a.values = append(a.values, v)
		}
	}
	if !ok || a.key == "" || len(a.values) < 2 {
		return alternate{}, fmt.Errorf("-alternate %q: want key=value,value[,...]", s)
	}
	if section, _, _ := strings.Cut(a.key, "."); !perIteration[section] {
		return alternate{}, fmt.Errorf("-alternate %s: the iterations read only the algebra, context, loop and research settings (the store's are flags, set once)", a.key)
	}
	return a, nil
}

// perIteration are the config sections the benchmark's iterations build
// their inputs from; another key would change nothing.
var perIteration = map[string]bool{"algebra": true, "context": true, "loop": true, "research": true}

// configs is cfg with the key set to each value in turn, each validated.
func (a alternate) configs(cfg config.Config) ([]config.Config, error) {
	var out []config.Config
	for _, v := range a.values {
		c, err := withKey(cfg, a.key, v)
		if err != nil {
			return nil, fmt.Errorf("-alternate %s=%s: %w", a.key, v, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// withKey is cfg with the dotted key set to v: a JSON value (a number, a
// boolean), else the string v.
func withKey(cfg config.Config, key, v string) (config.Config, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return cfg, err
	}
	var tree map[string]any
	if err := json.Unmarshal(b, &tree); err != nil {
		return cfg, err
	}
	names := strings.Split(key, ".")
	m := tree
	for _, n := range names[:len(names)-1] {
		if m, _ = m[n].(map[string]any); m == nil {
			return cfg, fmt.Errorf("no config section %q", n)
		}
	}
	last := names[len(names)-1]
	if _, ok := m[last]; !ok {
		return cfg, fmt.Errorf("no config key %q", key)
	}
	var val any = v
	if json.Valid([]byte(v)) {
		_ = json.Unmarshal([]byte(v), &val)
	}
	m[last] = val
	if b, err = json.Marshal(tree); err != nil {
		return cfg, err
	}
	var out config.Config
	if err := json.Unmarshal(b, &out); err != nil {
		return cfg, err
	}
	return out, out.Validate()
}

// armOf is the setting of timed iteration i of n settings: blocks of n,
// in turn forward and backward (ABBA for two), so that a drift over the
// run (the session grows, the server merges its index) weighs on every
// setting alike.
func armOf(i, n int) int {
	if b, k := i/n, i%n; b%2 == 1 {
		return n - 1 - k
	}
	return i % n
}

// renderArms is the table of each setting's iterations: how many, the
// median of each step and of the total, and the total's quartiles.
func renderArms(a alternate, ts []timing) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nStore work by setting of `%s`, alternated over the timed iterations (ms, medians; the table above mixes them):\n\n", a.key)
	b.WriteString("| setting | iterations | ReadState | Focus | ApplyOps | Observe | **total** | total p25 / p75 |\n|---|---:|---:|---:|---:|---:|---:|---|\n")
	for k, v := range a.values {
		by := map[string][]time.Duration{}
		for _, t := range ts {
			if t.arm != k {
				continue
			}
			for _, s := range steps {
				by[s] = append(by[s], t.step[s])
			}
			by["total"] = append(by["total"], t.total())
		}
		fmt.Fprintf(&b, "| %s | %d |", v, len(by["total"]))
		for _, s := range append(append([]string{}, steps...), "total") {
			fmt.Fprintf(&b, " %s |", ms(percentile(by[s], 50)))
		}
		fmt.Fprintf(&b, " %s / %s |\n", ms(percentile(by["total"], 25)), ms(percentile(by["total"], 75)))
	}
	return b.String()
}
