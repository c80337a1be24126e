package service_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/lethe-research/lethe/config/load"
	"github.com/lethe-research/lethe/internal/lethetest"
	"github.com/lethe-research/lethe/service"
)

// TestNewActivitiesLogsCorpusUpdate: the worker's log says when the corpus
// index was built and how much it extracted.
func TestNewActivitiesLogsCorpusUpdate(t *testing.T) {
	dir, corpus := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(corpus, "a.txt"), []byte("Tomatoes ripen in the sun."), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := lethetest.Config(t, "http://127.0.0.1:1", dir, map[string]string{"research.corpus_dir": corpus, "research.corpus_dense": "0"})
	core, logs := observer.New(zap.InfoLevel)
	a, err := service.NewActivities(cfg, load.Sources{}, nil, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.CloseResearch)
	if _, err := a.Corpus.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := logs.FilterMessage("corpus index updated").All()
	if len(got) != 1 || got[0].ContextMap()["extracted"] != int64(1) {
		t.Fatalf("logs %+v", logs.All())
	}
}
