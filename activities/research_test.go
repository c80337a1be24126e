package activities_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/graph"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/llm/llmtest"
)

// TestResearchActivities runs Discover, Fetch, Transcribe and Ingest as
// the worker wires them (service.NewActivities) in the SDK's activity
// environment: a corpus with Markdown and audio, a SearXNG that fails
// (Discover goes on with the corpus), plain HTTP pages (browser off), a
// refused internal URL, a whisper.cpp protocol double that answers once and
// then fails (the failure is counted, not fatal; the transcript is cached).
func TestResearchActivities(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ffmpeg is not installed")
		}
		t.Skip("ffmpeg is not installed")
	}
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
		"research.allow_loopback": "true", "research.whisper_url": whisper.URL, "research.browser_path": "off",
		"research.media_dir": filepath.Join(dir, "media"),
	})
	if a.Browser != nil || a.Search == nil || a.STT == nil || a.Web == nil || !a.Policy.AllowLoopback {
		t.Fatalf("wiring: browser %v search %v stt %v web %v policy %+v", a.Browser, a.Search, a.STT, a.Web, a.Policy)
	}
	const sid = "acts"
	if _, err := env.ExecuteActivity(activities.NameBootstrap, activities.BootstrapInput{SessionID: sid, Goal: "How do solid-state batteries fail?"}); err != nil {
		t.Fatal(err)
	}

	// Discover: SearXNG fails, the corpus answers (the talk found by name).
	v, err := env.ExecuteActivity(activities.NameDiscover, activities.DiscoverInput{SessionID: sid, Query: "dendrites talk", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	var disc activities.DiscoverResult
	v.Get(&disc)
	urls := map[string]bool{}
	for _, c := range disc.Candidates {
		urls[c.URL] = true
	}
	if !urls["corpus:///dendrites.md"] || !urls["corpus:///dendrites_talk.wav"] {
		t.Fatalf("candidates %+v", disc.Candidates)
	}

	// Fetch: corpus text, corpus audio, a web page by plain HTTP, a refused URL.
	const key = "research/1/0/0"
	in := activities.FetchInput{SessionID: sid, Key: key, URLs: []string{
		"corpus:///dendrites.md", "corpus:///dendrites_talk.wav", site.URL + "/interfaces", "http://10.0.0.1/admin",
	}}
	v, err = env.ExecuteActivity(activities.NameFetch, in)
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
		v, err = env.ExecuteActivity(activities.NameTranscribe, activities.TranscribeInput{SessionID: sid, Key: key, Page: 1})
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
	if _, err := env.ExecuteActivity(activities.NameFetch, activities.FetchInput{SessionID: sid, Key: key2, URLs: []string{"corpus:///other_talk.wav"}}); err != nil {
		t.Fatal(err)
	}
	v, err = env.ExecuteActivity(activities.NameTranscribe, activities.TranscribeInput{SessionID: sid, Key: key2, Page: 0})
	if err != nil {
		t.Fatalf("a failed transcription failed the activity: %v", err)
	}
	var tr activities.TranscribeResult
	v.Get(&tr)
	if tr.Failed != 1 || tr.Transcribed != 0 {
		t.Errorf("failed transcription: %+v", tr)
	}

	// Ingest: page text and the transcript become evidence.
	v, err = env.ExecuteActivity(activities.NameIngest, activities.IngestInput{SessionID: sid, Key: key, Task: "root", Iteration: 1})
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
	if _, err := env.ExecuteActivity(activities.NameIngest, activities.IngestInput{SessionID: sid, Key: key, Task: "root", Iteration: 1}); err != nil {
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
	if _, err := env.ExecuteActivity(activities.NameFetch, activities.FetchInput{SessionID: sid, Key: key3, URLs: []string{"corpus:///dendrites.md"}}); err != nil {
		t.Fatal(err)
	}
	v, err = env.ExecuteActivity(activities.NameIngest, activities.IngestInput{SessionID: sid, Key: key3, Task: "other", Iteration: 2})
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
	v, err = env.ExecuteActivity(activities.NameReadState, activities.ReadStateInput{SessionID: sid, Iteration: 3})
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
