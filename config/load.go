package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"
)

// EnvPrefix prefixes every environment override: budget.max_iterations is
// LETHE_BUDGET_MAX_ITERATIONS.
const EnvPrefix = "LETHE_"

// EnvFile names the environment variable holding the YAML file path.
const EnvFile = "LETHE_CONFIG"

// notParams are LETHE_* variables of the tooling, not parameters: the cache
// directory of scripts and CI, and test switches (LETHE_TEST_*).
func notParam(name string) bool {
	return name == EnvFile || name == "LETHE_CACHE" || strings.HasPrefix(name, "LETHE_TEST_")
}

// Sources says where Load reads from. Zero values mean: no file, process
// environment.
type Sources struct {
	File      string            // YAML file; "" = none (or $LETHE_CONFIG)
	Env       []string          // "KEY=value" pairs; nil = os.Environ()
	Overrides map[string]string // highest precedence, e.g. from workflow input or flags
}

// Default returns the tree of defaults.
func Default() Config {
	c, err := Load(Sources{Env: []string{}})
	if err != nil {
		panic(fmt.Sprintf("config defaults invalid: %v", err)) // a bug in params.go, caught by tests
	}
	return c
}

// Load resolves defaults → YAML file → LETHE_* environment → overrides and
// validates the result. Unknown keys and out-of-range values are errors that
// name the key.
func Load(src Sources) (Config, error) {
	v := viper.New()
	for _, p := range params {
		v.SetDefault(p.Key, p.Default)
	}
	env := src.Env
	if env == nil {
		env = os.Environ()
	}
	file := src.File
	if file == "" {
		file = lookupEnv(env, EnvFile)
	}
	if file != "" {
		v.SetConfigFile(file)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			return Config{}, fmt.Errorf("config file %s: %w", file, err)
		}
		if err := checkFileKeys(v.AllKeys(), file); err != nil {
			return Config{}, err
		}
	}
	envVals, err := envOverrides(env)
	if err != nil {
		return Config{}, err
	}
	for _, kv := range sortedPairs(envVals) {
		v.Set(kv[0], kv[1])
	}
	for _, kv := range sortedPairs(src.Overrides) {
		if _, ok := byKey[kv[0]]; !ok {
			return Config{}, fmt.Errorf("config: unknown parameter %q", kv[0])
		}
		v.Set(kv[0], kv[1])
	}
	var c Config
	err = v.UnmarshalExact(&c, viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(), mapstructure.StringToSliceHookFunc(","))))
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

var byKey = func() map[string]Param {
	m := make(map[string]Param, len(params))
	for _, p := range params {
		m[p.Key] = p
	}
	return m
}()

// EnvName is the environment variable that overrides key.
func EnvName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

func lookupEnv(env []string, name string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// envOverrides maps LETHE_* variables to keys; an unknown LETHE_* variable
// is an error so that a typo never silently runs with a default.
func envOverrides(env []string) (map[string]string, error) {
	names := make(map[string]string, len(params))
	for _, p := range params {
		names[EnvName(p.Key)] = p.Key
	}
	out := map[string]string{}
	var unknown []string
	for _, kv := range env {
		k, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, EnvPrefix) || notParam(k) {
			continue
		}
		key, known := names[k]
		if !known {
			unknown = append(unknown, k)
			continue
		}
		out[key] = val
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("config: unknown environment variable(s) %s", strings.Join(unknown, ", "))
	}
	return out, nil
}

func checkFileKeys(keys []string, file string) error {
	var unknown []string
	for _, k := range keys {
		if _, ok := byKey[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("config file %s: unknown parameter(s) %s", file, strings.Join(unknown, ", "))
	}
	return nil
}

func sortedPairs(m map[string]string) [][2]string {
	out := make([][2]string, 0, len(m))
	for k, v := range m {
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

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
