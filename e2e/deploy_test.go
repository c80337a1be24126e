package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/internal/lethetest"
)

// TestDeployDefaults holds docker-compose.yml and the Dockerfile to the
// deployment defaults: nothing published beyond loopback (the services
// there have no authentication of their own), no password in the file
// (every secret comes from the environment, required or empty), and a
// worker that does not run as root (Chromium keeps its sandbox).
func TestDeployDefaults(t *testing.T) {
	root := lethetest.Root()
	for _, f := range []struct {
		name  string
		check func([]byte) []string
	}{{"docker-compose.yml", composeProblems}, {"Dockerfile", dockerfileProblems}} {
		b, err := os.ReadFile(filepath.Join(root, f.name))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.check(b) {
			t.Errorf("%s: %s", f.name, p)
		}
	}
}

// TestDeployChecksCatchViolations feeds the checks the defaults this repo
// used to ship, so that a check that passes everything cannot go unseen.
func TestDeployChecksCatchViolations(t *testing.T) {
	compose := `
services:
  neo4j:
    environment:
      NEO4J_AUTH: neo4j/lethe-password
    ports: ["7474:7474", "127.0.0.1:7687:7687"]
    healthcheck:
      test: ["CMD", "cypher-shell", "-u", "neo4j", "-p", "lethe-password", "RETURN 1"]
  worker:
    environment:
      - LETHE_GRAPH_NEO4J_PASSWORD=${NEO4J_PASSWORD:-lethe-password}
      - LETHE_LLM_API_KEY=sk-123
    ports:
      - {target: 9464, published: "9464"}
`
	got := composeProblems([]byte(compose))
	for _, want := range []string{`"7474:7474"`, `9464:9464`, `NEO4J_AUTH`, `"lethe-password" on a command line`, `LETHE_GRAPH_NEO4J_PASSWORD`, `LETHE_LLM_API_KEY`} {
		if !containsAny(got, want) {
			t.Errorf("no problem mentions %s; got %q", want, got)
		}
	}
	if len(got) != 6 {
		t.Errorf("%d problems, want 6: %q", len(got), got)
	}
	for _, df := range []string{"FROM debian\nRUN true\n", "FROM debian\nUSER root\n", "FROM a AS b\nUSER app\nFROM debian\n", "FROM debian\nUSER 0:0\n", "FROM debian\nUSER app\nCMD [\"chromium\", \"--no-sandbox\"]\n"} {
		if p := dockerfileProblems([]byte(df)); len(p) != 1 {
			t.Errorf("Dockerfile %q: problems %q, want one", df, p)
		}
	}
}

func containsAny(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// composeProblems lists published ports not bound to 127.0.0.1 and
// password-like literals of a compose file.
func composeProblems(b []byte) []string {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return []string{err.Error()}
	}
	var compose struct {
		Services map[string]struct {
			Ports       []yaml.Node `yaml:"ports"`
			NetworkMode string      `yaml:"network_mode"`
		} `yaml:"services"`
	}
	if err := doc.Decode(&compose); err != nil {
		return []string{err.Error()}
	}
	if len(compose.Services) == 0 {
		return []string{"no services"}
	}
	var out []string
	for name, svc := range compose.Services {
		if svc.NetworkMode == "host" {
			out = append(out, "service "+name+": network_mode host publishes every port it listens on")
		}
		for _, p := range svc.Ports {
			if err := loopbackPort(p); err != "" {
				out = append(out, "service "+name+": port "+err)
			}
		}
	}
	return append(out, secretProblems(&doc, "")...)
}

// loopbackPort explains why a published port (short or long compose
// syntax) is not bound to 127.0.0.1, or returns "".
func loopbackPort(n yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		// HOST_IP:HOST_PORT:CONTAINER_PORT[/proto]; fewer parts bind 0.0.0.0.
		if !strings.HasPrefix(n.Value, "127.0.0.1:") || strings.Count(n.Value, ":") != 2 {
			return fmt.Sprintf("%q is not bound to 127.0.0.1 (write 127.0.0.1:HOST:CONTAINER)", n.Value)
		}
	case yaml.MappingNode:
		var p struct {
			HostIP    string `yaml:"host_ip"`
			Target    string `yaml:"target"`
			Published string `yaml:"published"`
		}
		if err := n.Decode(&p); err != nil {
			return err.Error()
		}
		if p.Published != "" && p.HostIP != "127.0.0.1" {
			return fmt.Sprintf("%s:%s has host_ip %q, want 127.0.0.1", p.Published, p.Target, p.HostIP)
		}
	default:
		return "has an unexpected form"
	}
	return ""
}

var (
	secretName = regexp.MustCompile(`(?i)pass|secret|token|api_?key|auth|credential`)
	// A reference without a default (${X}, ${X:?msg}) or with an empty one
	// (${X:-}).
	envRef = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*(?:(?::?\?)[^}]*|:?-)?\}`)
	// What may stand next to the reference: a user name ("neo4j/${...}").
	userPrefix = regexp.MustCompile(`^[A-Za-z0-9_.-]+/$`)
	// A password on a command line: -p word, --password word or =word.
	cmdPassword = regexp.MustCompile(`(?:^|\s)(?:-p|--password)(?:\s+|=)["']?([^\s"']+)`)
)

// secretProblems walks n for password-like literals: mapping entries and
// KEY=VALUE list items whose key names a secret, and passwords given on
// command lines (as one shell string or as list elements).
func secretProblems(n *yaml.Node, path string) []string {
	var out []string
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for i, c := range n.Content {
			at := fmt.Sprintf("%s[%d]", path, i)
			if c.Kind != yaml.ScalarNode {
				out = append(out, secretProblems(c, at)...)
				continue
			}
			out = append(out, cmdProblems(at, c.Value)...)
			if (c.Value == "-p" || c.Value == "--password") && i+1 < len(n.Content) && !strings.HasPrefix(n.Content[i+1].Value, "$") {
				out = append(out, fmt.Sprintf("%s: password %q on a command line is a literal", at, n.Content[i+1].Value))
			}
			// A search attribute's NAME=TYPE (LetheTokens=Double) is no secret.
			attr := i > 0 && n.Content[i-1].Value == "--search-attribute"
			if k, v, ok := strings.Cut(c.Value, "="); ok && !attr && secretName.MatchString(k) && !strings.ContainsAny(k, " -") {
				out = append(out, valueProblems(at+" "+k, v)...)
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			if v.Kind != yaml.ScalarNode {
				out = append(out, secretProblems(v, path+"."+k)...)
				continue
			}
			out = append(out, cmdProblems(path+"."+k, v.Value)...)
			if secretName.MatchString(k) {
				out = append(out, valueProblems(path+"."+k, v.Value)...)
			}
		}
	}
	return out
}

// cmdProblems finds a literal password in a shell command line.
func cmdProblems(path, v string) []string {
	var out []string
	for _, m := range cmdPassword.FindAllStringSubmatch(v, -1) {
		if !strings.HasPrefix(m[1], "$") {
			out = append(out, fmt.Sprintf("%s: password %q on a command line is a literal", path, m[1]))
		}
	}
	return out
}

// valueProblems accepts a secret made of environment references without
// defaults, optionally after a user name ("neo4j/${NEO4J_PASSWORD:?...}").
func valueProblems(path, v string) []string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	rest := envRef.ReplaceAllString(v, "")
	switch {
	case rest == v:
		return []string{fmt.Sprintf("%s = %q: a secret must come from the environment (${NAME:?message})", path, v)}
	case strings.Contains(rest, "${"):
		return []string{fmt.Sprintf("%s = %q: a reference has a default value; a secret needs none", path, v)}
	case rest != "" && !userPrefix.MatchString(rest):
		return []string{fmt.Sprintf("%s = %q: literal %q next to the reference", path, v, rest)}
	}
	return nil
}

// dockerfileProblems requires the final stage to switch to a user other
// than root and Chromium's sandbox not to be turned off.
func dockerfileProblems(b []byte) []string {
	user, sandboxOff := "", false
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		sandboxOff = sandboxOff || strings.Contains(line, "no-sandbox")
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			user = "" // each stage starts as root
		case "USER":
			if len(fields) > 1 {
				user = fields[1]
			}
		}
	}
	var out []string
	if name, _, _ := strings.Cut(user, ":"); name == "" || name == "root" || name == "0" {
		out = append(out, fmt.Sprintf("the final stage runs as %q; want a USER line naming an unprivileged user", user))
	}
	if sandboxOff {
		out = append(out, "turns Chromium's sandbox off (--no-sandbox)")
	}
	return out
}

// TestDeploySearXNG holds docker-compose.yml to a SearXNG the worker can
// use: deploy/searxng/settings.yml mounted read-only where the searxng
// service reads its settings, that file turning JSON on and the limiter off
// with no secret of its own, and the worker searching the web (SearXNG
// first) instead of the test corpus the image carries. The settings file
// itself is run by a real SearXNG in research's TestRealSearXNGDeploySettings.
func TestDeploySearXNG(t *testing.T) {
	root := lethetest.Root()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, p := range searxngComposeProblems(read("docker-compose.yml"), read("Dockerfile")) {
		t.Errorf("docker-compose.yml: %s", p)
	}
	for _, p := range searxngSettingsProblems(read("deploy/searxng/settings.yml")) {
		t.Errorf("deploy/searxng/settings.yml: %s", p)
	}
}

// TestDeploySearXNGChecksCatchViolations feeds the SearXNG checks the
// compose file and settings this repo used to ship (no settings mounted,
// the worker on auto) and SearXNG's own defaults.
func TestDeploySearXNGChecksCatchViolations(t *testing.T) {
	compose := `
services:
  searxng:
    environment:
      SEARXNG_SETTINGS_PATH: /etc/searxng/settings.yml
  worker:
    depends_on:
      temporal: {condition: service_healthy}
    environment:
      LETHE_RESEARCH_SEARXNG_URL: http://searxng:8080
`
	dockerfile := "FROM golang AS build\nENV LETHE_RESEARCH_CORPUS_DIR=/src\nFROM debian\nENV LETHE_RESEARCH_CORPUS_DIR=/corpus LETHE_GRAPH_PATH=/data/graph.db \\\n    HOME=/home/lethe\n"
	if env := dockerfileEnv([]byte(dockerfile)); env["LETHE_RESEARCH_CORPUS_DIR"] != "/corpus" || env["HOME"] != "/home/lethe" {
		t.Errorf("dockerfileEnv = %v", env)
	}
	got := searxngComposeProblems([]byte(compose), []byte(dockerfile))
	for _, want := range []string{"lack", "depend", `["corpus" "searxng"]`} {
		if !containsAny(got, want) {
			t.Errorf("no problem mentions %s; got %q", want, got)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d problems, want 3: %q", len(got), got)
	}
	settings := "server:\n  limiter: true\n  secret_key: \"ultrasecretkey\"\nsearch:\n  formats:\n    - html\n"
	got = searxngSettingsProblems([]byte(settings))
	for _, want := range []string{"use_default_settings", "lacks json", "limiter", "secret_key"} {
		if !containsAny(got, want) {
			t.Errorf("no settings problem mentions %s; got %q", want, got)
		}
	}
	if len(got) != 4 {
		t.Errorf("%d settings problems, want 4: %q", len(got), got)
	}
}

type composeService struct {
	Volumes     []string          `yaml:"volumes"`
	Environment map[string]string `yaml:"environment"`
	DependsOn   map[string]any    `yaml:"depends_on"`
}

// searxngComposeProblems checks the searxng service's settings mount and
// the worker's search providers, resolved as the worker resolves them
// from the image's environment (Dockerfile ENV) and the compose file's.
func searxngComposeProblems(compose, dockerfile []byte) []string {
	var c struct {
		Services map[string]composeService `yaml:"services"`
	}
	if err := yaml.Unmarshal(compose, &c); err != nil {
		return []string{err.Error()}
	}
	sx, worker := c.Services["searxng"], c.Services["worker"]
	var out []string
	const mount = "./deploy/searxng/settings.yml:/etc/searxng/settings.yml:ro"
	if !slices.Contains(sx.Volumes, mount) {
		out = append(out, fmt.Sprintf("searxng: volumes %q lack %q", sx.Volumes, mount))
	}
	if p := sx.Environment["SEARXNG_SETTINGS_PATH"]; p != "" && p != "/etc/searxng/settings.yml" {
		out = append(out, fmt.Sprintf("searxng: SEARXNG_SETTINGS_PATH %q is not the mounted file", p))
	}
	if _, ok := worker.DependsOn["searxng"]; !ok {
		out = append(out, "worker: does not depend on searxng")
	}
	var env []string
	for k, v := range dockerfileEnv(dockerfile) {
		env = append(env, k+"="+v)
	}
	for k, v := range worker.Environment {
		if strings.HasPrefix(k, "LETHE_RESEARCH_") {
			env = append(env, k+"="+v)
		}
	}
	cfg, err := load.Load(load.Sources{Env: env})
	if err != nil {
		return append(out, "worker: "+err.Error())
	}
	chain := cfg.Research.ProviderList()
	if len(chain) == 0 || chain[0] != config.ProviderSearXNG || slices.Contains(chain, config.ProviderCorpus) {
		out = append(out, fmt.Sprintf("worker: search providers %q, want SearXNG first and not the image's test corpus (set LETHE_RESEARCH_PROVIDERS)", chain))
	}
	return out
}

// dockerfileEnv is the final stage's ENV KEY=VALUE settings.
func dockerfileEnv(b []byte) map[string]string {
	env := map[string]string{}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			clear(env)
		case "ENV":
			for _, f := range fields[1:] {
				if k, v, ok := strings.Cut(f, "="); ok {
					env[k] = v
				}
			}
		}
	}
	return env
}

// searxngSettingsProblems checks the settings the worker depends on.
func searxngSettingsProblems(b []byte) []string {
	var s struct {
		UseDefaultSettings bool `yaml:"use_default_settings"`
		Search             struct {
			Formats []string `yaml:"formats"`
		} `yaml:"search"`
		Server struct {
			Limiter   *bool  `yaml:"limiter"`
			SecretKey string `yaml:"secret_key"`
		} `yaml:"server"`
	}
	if err := yaml.Unmarshal(b, &s); err != nil {
		return []string{err.Error()}
	}
	var out []string
	if !s.UseDefaultSettings {
		out = append(out, "use_default_settings is not true: the file would replace SearXNG's engine list")
	}
	if !slices.Contains(s.Search.Formats, "json") {
		out = append(out, fmt.Sprintf("search.formats %q lacks json: the worker's every search would be a 403", s.Search.Formats))
	}
	if s.Server.Limiter == nil || *s.Server.Limiter {
		out = append(out, "server.limiter is not false: the limiter answers the worker's API calls with 429")
	}
	if s.Server.SecretKey != "" {
		out = append(out, "server.secret_key is set in the file: it comes from SEARXNG_SECRET")
	}
	return out
}
