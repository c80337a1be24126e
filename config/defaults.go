package config

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"time"
)

// Defaults is the tree of defaults, built from the parameter table alone
// (no viper, no environment, no files): pure, so that workflow code may
// call it while it decodes a recorded config.
//
// The tree is built once per process and copied out: activities ask for
// it on every call, and the reflective walk cost 7.7% of a loaded worker's
// CPU (bench/load profile). Defaults sets only scalar fields, so the copy
// shares nothing mutable with the memo.
func Defaults() Config { return defaultTree() }

var defaultTree = sync.OnceValue(buildDefaults)

// buildDefaults walks the parameter table into a Config.
func buildDefaults() Config {
	var c Config
	v := reflect.ValueOf(&c).Elem()
	for _, p := range params {
		f := fieldByKey(v, p.Key)
		switch d := p.Default.(type) {
		case time.Duration:
			f.SetInt(int64(d))
		case int:
			f.SetInt(int64(d))
		case float64:
			f.SetFloat(d)
		case string:
			f.SetString(d)
		case bool:
			f.SetBool(d)
		}
	}
	return c
}

// fieldByKey walks a dotted key ("llm.outage_tolerance") down the struct
// by mapstructure tags. Every key of the table has a field (a test checks).
func fieldByKey(v reflect.Value, key string) reflect.Value {
	for _, name := range strings.Split(key, ".") {
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).Tag.Get("mapstructure") == name {
				v = v.Field(i)
				break
			}
		}
	}
	return v
}

// UnmarshalJSON decodes a config over the defaults. A config recorded in
// the history of a session that started before a parameter existed lacks
// that key; the session then runs with the parameter's default instead of
// a zero that validation refuses (which would fail every running session
// on the first worker that knows the parameter).
func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config // no UnmarshalJSON: no recursion
	d := plain(Defaults())
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	*c = Config(d)
	return nil
}
