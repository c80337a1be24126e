package activities_test

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/config"
	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/graph/embedded"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
	"github.com/lethe-research/lethe/research"
	"github.com/lethe-research/lethe/service"
)

// TestResearchActivities runs Discover, Fetch, Transcribe and Ingest as
// the worker wires them (service.NewActivities) in the SDK's activity
// environment: a corpus with Markdown and audio, a SearXNG that fails
// (Discover goes on with the corpus), plain HTTP pages (browser off), a
// refused internal URL, a whisper.cpp protocol double that answers once and
// then fails (the failure is counted, not fatal; the transcript is cached).
func TestResearchActivities(t *testing.T) {
	lethetest.Tool(t, lethetest.FFmpeg, "ffmpeg")
	corpus := t.TempDir()
	os.WriteFile(filepath.Join(corpus, "dendrites.md"), []byte("# Lithium dendrites\n\nLithium dendrites grow through grain boundaries of the solid electrolyte and short the cell.\n"), 0o644)
	os.WriteFile(filepath.Join(corpus, "dendrites_talk.wav"), lethetest.SilentWAV(16000, 16000*2), 0o644)

	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
	}))
	defer searx.Close()
	var whisperCalls atomic.Int64
	var whisperFail atomic.Bool
	whisper := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if _, _, err := r.FormFile("file"); err != nil || r.FormValue("translate") != "true" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error": "no 'file' field in the request"}`)
			return
		}
		whisperCalls.Add(1)
		if whisperFail.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error": "failed to process audio"}`)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"text": " The talk says that dendrites short solid-state cells at high current.\n"})
	}))
	defer whisper.Close()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><head><title>Interfaces</title></head><body><main><p>Cathode interfaces degrade into resistive interphases that raise the cell resistance.</p></main></body></html>")
	}))
	defer site.Close()

	dir := t.TempDir()
	env, store, a := newActivityEnv(t, dir, map[string]string{
		"research.corpus_dir": corpus, "research.searxng_url": searx.URL, "research.searxng_retries": "0",
		"research.allow_loopback": "true", "research.allowed_ports": "*", "research.whisper_url": whisper.URL, "research.browser_path": "off",
		"research.media_dir": filepath.Join(dir, "media"),
	})
	if a.Browser != nil || a.Search == nil || a.STT == nil || a.Web == nil || !a.Policy.AllowLoopback {
		t.Fatalf("wiring: browser %v search %v stt %v web %v policy %+v", a.Browser, a.Search, a.STT, a.Web, a.Policy)
	}
	const sid = "acts"
	if _, err := env.ExecuteActivity(acts.Bootstrap, activities.BootstrapInput{SessionID: sid, Goal: "How do solid-state batteries fail?"}); err != nil {
		t.Fatal(err)
	}

	// Discover: SearXNG fails, the corpus answers (the talk found by name).
	v, err := env.ExecuteActivity(acts.Discover, activities.DiscoverInput{SessionID: sid, Query: "dendrites talk", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	var disc activities.DiscoverResult
	v.Get(&disc)
	urls := map[string]bool{}
	for _, c := range disc.Candidates {
		urls[c.URL] = true
	}
	// Corpus hits are passages (the talk's only passage is its name).
	if !urls["corpus:///dendrites.md?passage=0"] || !urls["corpus:///dendrites_talk.wav?passage=0"] {
		t.Fatalf("candidates %+v", disc.Candidates)
	}

	// Fetch: corpus text, corpus audio, a web page by plain HTTP, a refused URL.
	const key = "research/1/0/0"
	in := activities.FetchInput{SessionID: sid, Key: key, URLs: []string{
		"corpus:///dendrites.md", "corpus:///dendrites_talk.wav", site.URL + "/interfaces", "http://10.0.0.1/admin",
	}}
	v, err = env.ExecuteActivity(acts.Fetch, in)
	if err != nil {
		t.Fatal(err)
	}
	var fr activities.FetchResult
	v.Get(&fr)
	if len(fr.Pages) != 4 || fr.Pages[0].Chars == 0 || fr.Pages[1].Media != "corpus:///dendrites_talk.wav" ||
		fr.Pages[2].Title != "Interfaces" || !strings.Contains(fr.Pages[3].Error, "refusing") {
		t.Fatalf("pages %+v", fr.Pages)
	}

	// Transcribe the audio page: once by whisper, then from the cache.
	for i := 0; i < 2; i++ {
		v, err = env.ExecuteActivity(acts.Transcribe, activities.TranscribeInput{SessionID: sid, Key: key, Page: 1})
		if err != nil {
			t.Fatal(err)
		}
		var tr activities.TranscribeResult
		v.Get(&tr)
		if tr.Media != 1 || tr.Transcribed != 1 || tr.Chars == 0 {
			t.Fatalf("transcribe %d: %+v", i, tr)
		}
	}
	if whisperCalls.Load() != 1 {
		t.Errorf("%d whisper calls, want 1 (the second from the cache)", whisperCalls.Load())
	}

	// A whisper failure is counted, not fatal.
	os.WriteFile(filepath.Join(corpus, "other_talk.wav"), lethetest.SilentWAV(16000, 16000*1), 0o644)
	whisperFail.Store(true)
	key2 := "research/1/0/1"
	if _, err := env.ExecuteActivity(acts.Fetch, activities.FetchInput{SessionID: sid, Key: key2, URLs: []string{"corpus:///other_talk.wav"}}); err != nil {
		t.Fatal(err)
	}
	v, err = env.ExecuteActivity(acts.Transcribe, activities.TranscribeInput{SessionID: sid, Key: key2, Page: 0})
	if err != nil {
		t.Fatalf("a failed transcription failed the activity: %v", err)
	}
	var tr activities.TranscribeResult
	v.Get(&tr)
	if tr.Failed != 1 || tr.Transcribed != 0 {
		t.Errorf("failed transcription: %+v", tr)
	}

	// Ingest: page text and the transcript become evidence.
	v, err = env.ExecuteActivity(acts.Ingest, activities.IngestInput{SessionID: sid, Key: key, Task: "root", Iteration: 1})
	if err != nil {
		t.Fatal(err)
	}
	var ing activities.IngestResult
	v.Get(&ing)
	ev, _ := store.Evidence(t.Context(), sid, "")
	kinds := map[graph.EvidenceKind]int{}
	for _, e := range ev {
		kinds[e.Kind]++
	}
	if ing.New != 3 || kinds[graph.KindTranscript] != 1 || kinds[graph.KindHTML] != 1 || kinds[graph.KindText] != 1 {
		t.Fatalf("ingest %+v, evidence kinds %v", ing, kinds)
	}
	// Idempotent: the same batch again (a retry) adds nothing.
	if _, err := env.ExecuteActivity(acts.Ingest, activities.IngestInput{SessionID: sid, Key: key, Task: "root", Iteration: 1}); err != nil {
		t.Fatal(err)
	}
	if again, _ := store.Evidence(t.Context(), sid, ""); len(again) != len(ev) {
		t.Errorf("a repeated ingest changed the evidence: %d → %d", len(ev), len(again))
	}

	// Another task finds the same page: nothing is stored twice, but the
	// evidence now supports that task too, so its research counts a yield
	// and ReadState counts the evidence for it.
	sess, err := store.GetSession(t.Context(), sid)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Apply(t.Context(), graph.ApplyRequest{SessionID: sid, Key: "apply/2", Iteration: 2, ActiveTask: "root", Ops: []graph.Op{
		{Kind: graph.OpCreate, Task: "other", Description: "dendrites again", EmbedText: "dendrites", Embedding: llmtest.Embedding("dendrites", len(sess.GoalQueryEmb))},
	}}); err != nil {
		t.Fatal(err)
	}
	const key3 = "research/2/0/0"
	if _, err := env.ExecuteActivity(acts.Fetch, activities.FetchInput{SessionID: sid, Key: key3, URLs: []string{"corpus:///dendrites.md"}}); err != nil {
		t.Fatal(err)
	}
	v, err = env.ExecuteActivity(acts.Ingest, activities.IngestInput{SessionID: sid, Key: key3, Task: "other", Iteration: 2})
	if err != nil {
		t.Fatal(err)
	}
	var shared activities.IngestResult
	v.Get(&shared)
	if shared.New != 0 || shared.Linked != 1 {
		t.Errorf("the same page for another task: %+v, want 0 new and 1 linked", shared)
	}
	if all, _ := store.Evidence(t.Context(), sid, ""); len(all) != len(ev) {
		t.Errorf("shared content stored twice: %d → %d evidence", len(ev), len(all))
	}
	v, err = env.ExecuteActivity(acts.ReadState, activities.ReadStateInput{SessionID: sid, Iteration: 3})
	if err != nil {
		t.Fatal(err)
	}
	var rs activities.ReadStateResult
	v.Get(&rs)
	for _, ti := range rs.Tasks {
		if ti.ShortID == "other" && ti.Evidence != 1 {
			t.Errorf("ReadState counts %d evidence for the task the shared page supports, want 1", ti.Evidence)
		}
	}
}

// newResearchEnv is newActivityEnv that also returns the model server, whose
// request log shows what was embedded.
func newResearchEnv(t *testing.T, dir string, extra map[string]string) (*testsuite.TestActivityEnvironment, *embedded.Store, *activities.Activities, *llmtest.Server) {
	t.Helper()
	return newScriptedEnv(t, dir, extra, lethetest.Script(t, "battery_root_done"))
}

// newScriptedEnv is newResearchEnv with the model answering from script.
func newScriptedEnv(t *testing.T, dir string, extra map[string]string, script llmtest.Script) (*testsuite.TestActivityEnvironment, *embedded.Store, *activities.Activities, *llmtest.Server) {
	t.Helper()
	model := llmtest.NewServer(script)
	t.Cleanup(model.Close)
	env, store, a := newEnvAt(t, dir, extra, model.URL())
	return env, store, a, model
}

// newEnvAt is newScriptedEnv's environment with the model servers at url
// (a Faulty in front of a Server, say).
func newEnvAt(t *testing.T, dir string, extra map[string]string, url string) (*testsuite.TestActivityEnvironment, *embedded.Store, *activities.Activities) {
	t.Helper()
	return envFor(t, lethetest.Config(t, url, dir, extra))
}

// envFor is an activity environment of a worker with configuration cfg.
func envFor(t *testing.T, cfg config.Config) (*testsuite.TestActivityEnvironment, *embedded.Store, *activities.Activities) {
	t.Helper()
	store, err := embedded.Open(cfg.Graph.Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	a, err := service.NewActivities(cfg, load.Sources{}, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.CloseResearch)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a, activity.RegisterOptions{SkipInvalidStructFunctions: true})
	return env, store, a
}

// stage writes docs where Fetch stages a batch (what a hostile page could
// have put there, had a fetcher let it through).
func stage(t *testing.T, store *embedded.Store, sid, key string, docs []research.Document) {
	t.Helper()
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(docs); err != nil {
		t.Fatal(err)
	}
	if err := store.PutBlob(t.Context(), sid, "pages/"+key, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
}

// TestIngestBoundsHostilePage: a 4 MiB page (thousands of chunks) with a
// 1 MB title, and a page whose URL is over the cap. Ingest embeds at most
// max_chunks_embedded chunks of the page, chosen by the research query
// (the one relevant paragraph deep in the page is among them), cuts the
// title on every evidence item, drops the page with the long URL, and
// heartbeats while it works.
func TestIngestBoundsHostilePage(t *testing.T) {
	corpus := t.TempDir()
	os.WriteFile(filepath.Join(corpus, "garnet.md"), []byte("# Garnet electrolytes\n\nGarnet electrolytes crack under lithium plating.\n"), 0o644)
	env, store, _, model := newResearchEnv(t, t.TempDir(), map[string]string{
		"research.corpus_dir": corpus, "research.browser_path": "off", "research.max_chunks_embedded": "48",
	})
	const sid = "hostile"
	if _, err := env.ExecuteActivity(acts.Bootstrap, activities.BootstrapInput{SessionID: sid, Goal: "How do solid-state batteries fail?"}); err != nil {
		t.Fatal(err)
	}
	const needle = "Garnet electrolyte pellets crack along grain boundaries when lithium dendrites wedge them open."
	var page strings.Builder
	for i := 0; page.Len() < 4<<20; i++ {
		if i == 3000 {
			page.WriteString(needle + "\n\n")
		}
		fmt.Fprintf(&page, "Paragraph %d of filler about the weather, gardening and the history of the town hall, repeated to make the page long enough.\n\n", i)
	}
	stage(t, store, sid, "research/1/0/0", []research.Document{
		{URL: "https://example.org/long-page", Title: strings.Repeat("Endless title ", 80_000), Text: page.String(), Kind: graph.KindHTML},
		{URL: "https://example.org/" + strings.Repeat("a", 4096), Title: "Long URL", Text: "Text of a page whose URL is over the cap.", Kind: graph.KindHTML},
	})
	before := len(model.Requests())
	var heartbeats atomic.Int64
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { heartbeats.Add(1) })
	start := time.Now()
	v, err := env.ExecuteActivity(acts.Ingest, activities.IngestInput{SessionID: sid, Key: "research/1/0/0", Task: "root", Iteration: 1,
		Query: "garnet electrolyte cracking", Params: activities.IngestParams{ChunkChars: 1200, MaxChunksPerPage: 12, MaxChunksEmbedded: 48, SVDK: 16, MinEvidence: 3}})
	if err != nil {
		t.Fatal(err)
	}
	var ing activities.IngestResult
	v.Get(&ing)
	embedded := 0
	for _, r := range model.Requests()[before:] {
		embedded += len(r.Inputs)
	}
	t.Logf("ingest of a 4 MiB page: %s, %d chunks embedded, %d heartbeats, %+v", time.Since(start), embedded, heartbeats.Load(), ing)
	// 48 chunks at most, and the query+task that selects among them.
	if embedded > 48+1 || ing.Chunks > 48 || heartbeats.Load() == 0 {
		t.Errorf("embedded %d texts (%d chunks), %d heartbeats; want at most 48 chunks + 1 query and heartbeats", embedded, ing.Chunks, heartbeats.Load())
	}
	ev, _ := store.Evidence(t.Context(), sid, "")
	found := false
	for _, e := range ev {
		if n := utf8.RuneCountInString(e.Title); n > 300 {
			t.Errorf("evidence title of %d runes", n)
		}
		if len(e.SourceURL) > 2048 {
			t.Errorf("evidence from a URL of %d bytes", len(e.SourceURL))
		}
		found = found || strings.Contains(e.Content, needle)
	}
	if len(ev) == 0 || !found {
		t.Errorf("%d evidence items; the paragraph that matches the query is kept: %v", len(ev), found)
	}
}

// TestMediaCaptureAndCleanup: without a speech-to-text server no media is
// captured; with one, the captured file is deleted once Transcribe has
// handled it, whether whisper answered or not, and an HLS playlist posing
// as audio is refused by ffmpeg without anything fetching its segments.
func TestMediaCaptureAndCleanup(t *testing.T) {
	lethetest.Tool(t, lethetest.FFmpeg, "ffmpeg")
	var segments atomic.Int64
	var site *httptest.Server
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/talk.wav":
			w.Header().Set("Content-Type", "audio/wav")
			w.Write(lethetest.SilentWAV(16000, 16000*3))
		case r.URL.Path == "/live.m3u8": // a playlist that says it is audio
			w.Header().Set("Content-Type", "audio/mpeg")
			fmt.Fprintf(w, "#EXTM3U\n#EXT-X-TARGETDURATION:10\n%s\n#EXTINF:10.0,\n%s/seg/0.ts\n#EXT-X-ENDLIST\n", strings.Repeat("#PAD\n", 20000), site.URL)
		case strings.HasPrefix(r.URL.Path, "/seg/"):
			segments.Add(1)
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	var whisperFail atomic.Bool
	whisper := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if whisperFail.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error": "failed to process audio"}`)
			return
		}
		io.WriteString(w, `{"text": "dendrites short the cell"}`)
	}))
	defer whisper.Close()

	// No whisper server: media is not even downloaded.
	dir := t.TempDir()
	media := filepath.Join(dir, "media")
	env, _, a, _ := newResearchEnv(t, dir, map[string]string{"research.allow_loopback": "true", "research.allowed_ports": "*", "research.browser_path": "off", "research.media_dir": media})
	const sid = "media"
	if _, err := env.ExecuteActivity(acts.Bootstrap, activities.BootstrapInput{SessionID: sid, Goal: "How do solid-state batteries fail?"}); err != nil {
		t.Fatal(err)
	}
	v, err := env.ExecuteActivity(acts.Fetch, activities.FetchInput{SessionID: sid, Key: "research/1/0/0", URLs: []string{site.URL + "/talk.wav"}})
	if err != nil {
		t.Fatal(err)
	}
	var fr activities.FetchResult
	v.Get(&fr)
	if a.STT != nil || fr.Pages[0].Media != "" || !strings.Contains(fr.Pages[0].Error, "no speech-to-text") || len(listDir(media)) != 0 {
		t.Fatalf("without whisper: pages %+v, media dir %v", fr.Pages, listDir(media))
	}

	// With whisper: captured, transcribed (or not), deleted.
	dir = t.TempDir()
	media = filepath.Join(dir, "media")
	env, _, _, _ = newResearchEnv(t, dir, map[string]string{"research.allow_loopback": "true", "research.allowed_ports": "*", "research.browser_path": "off",
		"research.media_dir": media, "research.whisper_url": whisper.URL})
	if _, err := env.ExecuteActivity(acts.Bootstrap, activities.BootstrapInput{SessionID: sid, Goal: "How do solid-state batteries fail?"}); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		path              string
		fail              bool
		transcribed, errs int
	}{{"/talk.wav", false, 1, 0}, {"/talk.wav?again", true, 0, 1}, {"/live.m3u8", false, 0, 1}} {
		key := fmt.Sprintf("research/1/0/%d", i+1)
		whisperFail.Store(tc.fail)
		v, err := env.ExecuteActivity(acts.Fetch, activities.FetchInput{SessionID: sid, Key: key, URLs: []string{site.URL + tc.path}})
		if err != nil {
			t.Fatal(err)
		}
		v.Get(&fr)
		if fr.Pages[0].Media == "" || len(listDir(media)) != 1 {
			t.Fatalf("%s: pages %+v, media dir %v", tc.path, fr.Pages, listDir(media))
		}
		v, err = env.ExecuteActivity(acts.Transcribe, activities.TranscribeInput{SessionID: sid, Key: key, Page: 0})
		if err != nil {
			t.Fatal(err)
		}
		var tr activities.TranscribeResult
		v.Get(&tr)
		if tr.Transcribed != tc.transcribed || tr.Failed != tc.errs || len(listDir(media)) != 0 {
			t.Errorf("%s: %+v, media dir after Transcribe %v", tc.path, tr, listDir(media))
		}
	}
	if segments.Load() != 0 {
		t.Errorf("%d requests for the playlist's segments", segments.Load())
	}
}

func listDir(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestIngestKeepsHitsInOrderAndCutsTheLast: a batch of passage windows
// (each hit between two neighbours that repeat the query's words) keeps
// the hits first, in the batch's order, whole while they fit; the hit that
// overflows research.ingest_max_chars is cut to its window that holds the
// query's terms, not dropped; no neighbour displaces a hit.
func TestIngestKeepsHitsInOrderAndCutsTheLast(t *testing.T) {
	env, store, _, _ := newResearchEnv(t, t.TempDir(), map[string]string{"research.browser_path": "off"})
	const sid = "hits-in-order"
	if _, err := env.ExecuteActivity(acts.Bootstrap, activities.BootstrapInput{SessionID: sid, Goal: "Which command sets the default editor?"}); err != nil {
		t.Fatal(err)
	}
	filler := strings.Repeat("This paragraph talks about other things entirely, such as printers and fonts. ", 6)
	neighbour := strings.Repeat("The default editor command default editor setting editor command. ", 6)
	hits := []string{
		"First hit: " + filler + "\n\nIn Debian, update-alternatives --config editor changes the default editor.",
		"Second hit: " + filler,
		"Third hit: " + filler + "\n\nThe answer three: select-editor sets the editor of one user.",
	}
	var docs []research.Document
	for i, h := range hits {
		text := neighbour + "\n\n" + h + "\n\n" + neighbour
		start := len(neighbour) + 2
		docs = append(docs, research.Document{URL: fmt.Sprintf("corpus:///ch%d.html?passage=1", i), Title: "Chapter", Text: text,
			Kind: graph.KindHTML, Hit: &research.Span{Start: start, End: start + len(h)}})
	}
	stage(t, store, sid, "research/1/0/0", docs)
	p := activities.IngestParamsOf(config.Defaults())
	budget := utf8.RuneCountInString(hits[0]) + utf8.RuneCountInString(hits[1]) + 300
	p.MaxChars, p.HitsInOrder, p.MinTrim = budget, true, 200
	if _, err := env.ExecuteActivity(acts.Ingest, activities.IngestInput{SessionID: sid, Key: "research/1/0/0", Task: "root", Iteration: 1,
		Query: "which command sets the default editor", Params: p}); err != nil {
		t.Fatal(err)
	}
	ev, err := store.Evidence(t.Context(), sid, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	total := 0
	for _, e := range ev {
		got = append(got, e.Content)
		total += utf8.RuneCountInString(e.Content)
	}
	joined := strings.Join(got, "\n---\n")
	if len(ev) != 3 || !strings.Contains(joined, "update-alternatives --config editor") || !strings.Contains(joined, "Second hit") ||
		!strings.Contains(joined, "select-editor sets the editor") || strings.Contains(joined, "Third hit") || strings.Contains(joined, "setting editor command") {
		t.Errorf("want the first two hits whole and the third cut to its answer, no neighbour; got %d items:\n%s", len(ev), joined)
	}
	if total > budget {
		t.Errorf("%d characters kept, budget %d", total, budget)
	}
}

// TestDiscoverMarksHeldSources: a candidate whose URL the session already
// holds evidence from (fetched and ingested by an earlier run) comes back
// Held; the others do not.
func TestDiscoverMarksHeldSources(t *testing.T) {
	corpus := t.TempDir()
	os.WriteFile(filepath.Join(corpus, "dendrites.md"), []byte("# Lithium dendrites\n\nLithium dendrites grow through grain boundaries of the solid electrolyte and short the cell.\n"), 0o644)
	os.WriteFile(filepath.Join(corpus, "interfaces.md"), []byte("# Dendrites and interfaces\n\nCathode interfaces degrade into resistive interphases; dendrites grow at the anode.\n"), 0o644)
	env, _, _ := newActivityEnv(t, t.TempDir(), map[string]string{"research.corpus_dir": corpus, "research.browser_path": "off"})
	const sid = "held"
	if _, err := env.ExecuteActivity(acts.Bootstrap, activities.BootstrapInput{SessionID: sid, Goal: "How do solid-state batteries fail?"}); err != nil {
		t.Fatal(err)
	}
	discover := func() map[string]bool {
		t.Helper()
		v, err := env.ExecuteActivity(acts.Discover, activities.DiscoverInput{SessionID: sid, Query: "dendrites", Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		var disc activities.DiscoverResult
		v.Get(&disc)
		held := map[string]bool{}
		for _, c := range disc.Candidates {
			held[c.URL] = c.Held
		}
		return held
	}
	const a, b = "corpus:///dendrites.md?passage=0", "corpus:///interfaces.md?passage=0"
	if got := discover(); len(got) != 2 || got[a] || got[b] {
		t.Fatalf("before any fetch: held %v, want both candidates, neither held", got)
	}
	const key = "research/1/0/0"
	if _, err := env.ExecuteActivity(acts.Fetch, activities.FetchInput{SessionID: sid, Key: key, URLs: []string{a}}); err != nil {
		t.Fatal(err)
	}
	v, err := env.ExecuteActivity(acts.Ingest, activities.IngestInput{SessionID: sid, Key: key, Task: "root", Iteration: 1})
	if err != nil {
		t.Fatal(err)
	}
	var ing activities.IngestResult
	v.Get(&ing)
	if ing.New == 0 {
		t.Fatalf("ingest %+v: nothing to hold", ing)
	}
	if got := discover(); !got[a] || got[b] {
		t.Fatalf("after %s was read: held %v, want it alone held", a, got)
	}
}
