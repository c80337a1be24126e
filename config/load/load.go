// Package load resolves the parameter tree from its sources: the defaults of
// config/params.go, an optional YAML file, LETHE_* environment variables and
// overrides. It holds everything of config that reads files or the
// environment (viper), so that config itself stays pure data that workflow
// code may link (docs/contract.md).
package load

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	"github.com/lethe-research/lethe/config"
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

// Load resolves defaults → YAML file → LETHE_* environment → overrides and
// validates the result. Unknown keys and out-of-range values are errors that
// name the key.
func Load(src Sources) (config.Config, error) {
	v := viper.New()
	for _, p := range config.Params() {
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
			return config.Config{}, fmt.Errorf("config file %s: %w", file, err)
		}
		if err := checkFileKeys(v.AllKeys(), file); err != nil {
			return config.Config{}, err
		}
	}
	envVals, err := envOverrides(env)
	if err != nil {
		return config.Config{}, err
	}
	commonKeys(env, envVals)
	if err := refuseSecrets(src.Overrides); err != nil {
		return config.Config{}, err
	}
	for _, kv := range sortedPairs(envVals) {
		v.Set(kv[0], kv[1])
	}
	for _, kv := range sortedPairs(src.Overrides) {
		if _, ok := byKey[kv[0]]; !ok {
			return config.Config{}, fmt.Errorf("config: unknown parameter %q", kv[0])
		}
		v.Set(kv[0], kv[1])
	}
	var c config.Config
	err = v.UnmarshalExact(&c, viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(), mapstructure.StringToSliceHookFunc(","))))
	if err != nil {
		return config.Config{}, fmt.Errorf("config: %w", err)
	}
	if err := c.Validate(); err != nil {
		return config.Config{}, err
	}
	return c, nil
}

var byKey = func() map[string]config.Param {
	m := make(map[string]config.Param, len(config.Params()))
	for _, p := range config.Params() {
		m[p.Key] = p
	}
	return m
}()

// EnvName is the environment variable that overrides key.
func EnvName(key string) string { return config.EnvName(key) }

// Setting names key for a user's eyes: the parameter and the environment
// variable that sets it, "llm.api_key (LETHE_LLM_API_KEY)".
func Setting(key string) string { return key + " (" + EnvName(key) + ")" }

func lookupEnv(env []string, name string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// EnvKeys maps the LETHE_* variables of env ("KEY=value" pairs) to
// parameter keys as Load reads them, for a tool that hands a deployment's
// environment file on as parameters.
func EnvKeys(env []string) (map[string]string, error) {
	return envOverrides(env)
}

// envOverrides maps LETHE_* variables to keys; an unknown LETHE_* variable
// is an error so that a typo never silently runs with a default.
func envOverrides(env []string) (map[string]string, error) {
	names := map[string]string{}
	for _, p := range config.Params() {
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

// CommonKeyEnv are the environment names other tools use for the search
// providers' API keys, by parameter: the worker reads them too, so a key
// already exported for another tool needs no second name. The LETHE_*
// name wins when both are set.
var CommonKeyEnv = map[string]string{
	"research.tavily_api_key": "TAVILY_API_KEY",
	"research.brave_api_key":  "BRAVE_API_KEY",
}

// commonKeys fills the API keys from their common environment names where
// no LETHE_* variable set them (vals: the LETHE_* overrides by key).
func commonKeys(env []string, vals map[string]string) {
	for key, name := range CommonKeyEnv {
		if _, set := vals[key]; set {
			continue
		}
		if v := lookupEnv(env, name); v != "" {
			vals[key] = v
		}
	}
}

// Secret reports whether a parameter is a credential: every key whose last
// segment ends in api_key (llm.api_key, embed.api_key, eval.judge_api_key,
// the search providers' keys). A credential lives in the worker's
// environment or config file only: its config field is json:"-", so it never
// reaches a workflow input or result.
func Secret(key string) bool {
	return strings.HasSuffix(key, "api_key")
}

// CheckSessionParams refuses the parameters a session or an evaluation
// must not set: credentials (they would be recorded in its history) and
// the worker-only endpoints and paths (config.WorkerOnly). where names the
// input in the error ("a session parameter").
func CheckSessionParams(where string, params map[string]string) error {
	if err := refuseSecrets(params); err != nil {
		return err
	}
	var bad []string
	for key := range params {
		if config.WorkerOnly(key) {
			bad = append(bad, key)
		}
	}
	if len(bad) > 0 {
		return config.WorkerOnlyError(where, bad)
	}
	return nil
}

// refuseSecrets refuses an API key among a session's parameters: the
// parameters travel in the session's workflow input and are recorded in its
// history, where a key must never be. The key belongs in the worker's
// environment or config file.
func refuseSecrets(overrides map[string]string) error {
	var bad []string
	for key := range overrides {
		if Secret(key) {
			bad = append(bad, key)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	var hint []string
	for _, key := range bad {
		h := EnvName(key)
		if common, ok := CommonKeyEnv[key]; ok {
			h += " or " + common
		}
		hint = append(hint, h)
	}
	return fmt.Errorf("config: %s cannot be a session parameter (it would be recorded in the workflow history); set %s in the worker's environment or config file",
		strings.Join(bad, ", "), strings.Join(hint, "; "))
}
