package config

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"time"
)

// Validate checks every numeric parameter against its declared range and
// the cross-parameter rules.
func (c Config) Validate() error {
	var errs []error
	vals := c.Flatten()
	for _, p := range params {
		if p.Min == 0 && p.Max == 0 {
			continue
		}
		var x float64
		switch v := vals[p.Key].(type) {
		case int:
			x = float64(v)
		case float64:
			x = v
		case time.Duration:
			x = v.Seconds()
		default:
			continue
		}
		if math.IsNaN(x) || x < p.Min || x > p.Max {
			errs = append(errs, fmt.Errorf("config: %s = %v is out of range [%v, %v] (%s)", p.Key, vals[p.Key], fmtBound(p, p.Min), fmtBound(p, p.Max), p.Reason))
		}
	}
	if c.Thinking.MinTokens > c.Thinking.MaxTokens {
		errs = append(errs, fmt.Errorf("config: thinking.min_tokens (%d) exceeds thinking.max_tokens (%d)", c.Thinking.MinTokens, c.Thinking.MaxTokens))
	}
	if c.Budget.MinIterations > c.Budget.MaxIterations {
		errs = append(errs, fmt.Errorf("config: budget.min_iterations (%d) exceeds budget.max_iterations (%d)", c.Budget.MinIterations, c.Budget.MaxIterations))
	}
	if c.Context.BetaMin > c.Context.BetaMax {
		errs = append(errs, fmt.Errorf("config: context.beta_min (%v) exceeds context.beta_max (%v)", c.Context.BetaMin, c.Context.BetaMax))
	}
	if c.Research.MinTime > c.Research.MaxTime {
		errs = append(errs, fmt.Errorf("config: research.min_time (%s) exceeds research.max_time (%s)", c.Research.MinTime, c.Research.MaxTime))
	}
	switch c.Graph.Backend {
	case "embedded", "neo4j":
	default:
		errs = append(errs, fmt.Errorf("config: graph.backend = %q, want embedded or neo4j", c.Graph.Backend))
	}
	if err := c.Research.validateProviders(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.Research.Ports(); err != nil {
		errs = append(errs, err)
	}
	if c.Temporal.TaskQueue == "" {
		errs = append(errs, errors.New("config: temporal.task_queue must not be empty"))
	}
	return errors.Join(errs...)
}

func fmtBound(p Param, x float64) string {
	if p.Kind == Duration {
		return (time.Duration(x * float64(time.Second))).String()
	}
	return fmt.Sprint(x)
}

// Flatten returns every parameter's value by key, walking the struct by its
// mapstructure tags.
func (c Config) Flatten() map[string]any {
	out := map[string]any{}
	flatten(reflect.ValueOf(c), "", out)
	return out
}

func flatten(v reflect.Value, prefix string, out map[string]any) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := t.Field(i).Tag.Get("mapstructure")
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			flatten(f, key, out)
			continue
		}
		out[key] = f.Interface()
	}
}

// Default returns the tree of defaults, validated: a default out of its own
// range is a bug in params.go, caught by the tests.
func Default() Config {
	c := Defaults()
	if err := c.Validate(); err != nil {
		panic(fmt.Sprintf("config defaults invalid: %v", err))
	}
	return c
}
