package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

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
