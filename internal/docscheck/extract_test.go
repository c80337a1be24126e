package docscheck

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lethe-research/lethe/internal/lethetest"
)

const sample = "# Title\n" +
	"Run `go run ./starter -goal\n\"x\" -param budget.max_iterations=3`, then (`-output r.md`).\n" +
	"\n" +
	"Set `LETHE_LLM_BASE_URL` or `llm.*`; `research.rate.<provider>`; see [ops](docs/operations.md#scale).\n" +
	"\n" +
	"```sh\n" +
	"LETHE_TEST_SKIP=neo4j make -s test GOAL=x   # comment `make nothing`\n" +
	"temporal workflow query -w ID \\\n" +
	"    --name progress\n" +
	"eval \"$(scripts/models.sh env)\"; go test ./e2e/ -run 'TestA|TestB/sub'\n" +
	"export LETHE_TEMPORAL_LLM_QUEUE=q\n" +
	"worker --queues q\n" +
	"```\n" +
	"A bare `-p research.x=1` and `-latency` here, `graph.db` and `graph.SimilarParams.Full` not keys.\n"

// TestExtract reads each kind of use from a sample doc: spans across
// lines, continuation lines, comments, $( ), exports, bare flags.
func TestExtract(t *testing.T) {
	x := Extractor{Sections: map[string]bool{"budget": true, "llm": true, "research": true, "graph": true},
		TopLevel: map[string]bool{"docs": true, "scripts": true, "e2e": true}}
	var got []string
	for _, u := range x.Extract(Parse("s.md", sample)) {
		got = append(got, fmt.Sprintf("%d %s %s %s", u.Line, u.Kind, u.Token, u.Cmd))
	}
	want := []string{
		"2 config key budget.max_iterations ",
		"2 command ./starter starter",
		"2 flag goal starter", "2 flag param starter", "3 flag output starter",
		"5 env var LETHE_LLM_BASE_URL ", "5 config key llm.* ", "5 config key research.rate.<provider> ",
		"8 env var LETHE_TEST_SKIP ", "8 make target test ",
		"9 temporal command workflow query ", "9 temporal flag w workflow query", "9 temporal flag name workflow query",
		"11 path scripts/models.sh ", "11 path e2e/ ", "11 test TestA ", "11 test TestB ",
		"12 env var LETHE_TEMPORAL_LLM_QUEUE ",
		"13 command worker worker", "13 flag queues worker", "13 worker queues q LETHE_TEMPORAL_LLM_QUEUE=q",
		"15 config key research.x ", "15 flag p *",
		"5 link docs/operations.md#scale ",
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing %q", w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("unexpected %q", g)
		}
	}
}

// TestCheckFinds runs the check on names the code does not have, next to
// ones it has: every wrong one is a finding, no right one is.
func TestCheckFinds(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the starter and the worker")
	}
	root := lethetest.Root()
	truth, err := LoadTruth(root, lethetest.TemporalCLI())
	if err != nil {
		t.Fatal(err)
	}
	doc := "```sh\n" +
		"make run\nmake nosuch\n" +
		"go run ./starter -param budget.max_iterations=3\ngo run ./starter -p budget.nosuch=3\n" +
		"LETHE_LLM_MODEL=m worker --queues lethe\nworker --queues lethe-llm\nLETHE_NOSUCH=1 make run\n" +
		"bash scripts/run.sh\nbash scripts/nosuch.sh\n" +
		"go test ./e2e/ -run TestFaultChatDownPastTolerance\ngo test ./e2e/ -run TestNoSuch\n" +
		"```\n[a](README.md) [b](docs/nosuch.md) [c](README.md#development) [d](README.md#nosuch)\n"
	wrong := []string{"nosuch", "p", "budget.nosuch", "LETHE_NOSUCH", "lethe-llm", "scripts/nosuch.sh", "TestNoSuch",
		"docs/nosuch.md", "README.md#nosuch"}
	if truth.Temporal != "" {
		doc += "```sh\ntemporal workflow query -w x --name progress\ntemporal workflow nosuch\ntemporal workflow list --nosuch\n```\n"
		wrong = append(wrong, "workflow nosuch", "nosuch")
	}
	d := Parse("doc.md", doc)
	x := Extractor{Sections: truth.Sections(), TopLevel: truth.TopLevel}
	readme := Parse("README.md", "## Development\n")
	findings, err := truth.Check(context.Background(), x.Extract(d), map[string]Doc{"doc.md": d, "README.md": readme})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range findings {
		got = append(got, f.Use.Token)
		t.Log(f)
	}
	slices.Sort(got)
	slices.Sort(wrong)
	if strings.Join(got, "\n") != strings.Join(wrong, "\n") {
		t.Errorf("findings %q, want %q", got, wrong)
	}
}
