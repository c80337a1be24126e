package config

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// workerOnly are the parameters that carry credentials, name an endpoint
// the worker sends them to, or name a file, directory or program on the
// worker's machine. They are the worker's configuration alone: a session
// or evaluation that could set them could send the worker's keys to its
// own server, reach internal hosts through the worker, or write and run
// files on the worker's disk.
var workerOnly = []string{
	"llm.base_url", "llm.api_key",
	"embed.base_url", "embed.api_key",
	"eval.judge_base_url", "eval.judge_api_key", "eval.out_dir",
	"research.searxng_url", "research.wikipedia_url", "research.arxiv_url",
	"research.tavily_url", "research.tavily_api_key", "research.brave_url", "research.brave_api_key",
	"research.whisper_url",
	"research.corpus_dir", "research.corpus_index_dir", "research.media_dir",
	"research.browser_path", "research.pdftotext_path", "research.ffmpeg_path",
	"graph.path", "graph.neo4j_uri", "graph.neo4j_user", "graph.neo4j_password", "graph.neo4j_database",
}

// WorkerOnly reports whether key is worker configuration only (workerOnly).
func WorkerOnly(key string) bool { return slices.Contains(workerOnly, key) }

// EnvName is the environment variable that sets key on the worker:
// budget.max_iterations is LETHE_BUDGET_MAX_ITERATIONS.
func EnvName(key string) string {
	return "LETHE_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// WorkerOnlyError refuses worker-only keys found in a session's or an
// evaluation's input, naming where each belongs.
func WorkerOnlyError(where string, keys []string) error {
	keys = slices.Clone(keys)
	sort.Strings(keys)
	var hint []string
	for _, k := range keys {
		hint = append(hint, fmt.Sprintf("%s (config file key %s)", EnvName(k), k))
	}
	return fmt.Errorf("config: %s cannot be set by %s: worker configuration only (credentials, endpoints and paths on the worker); set %s in the worker's environment or config file",
		strings.Join(keys, ", "), where, strings.Join(hint, "; "))
}

// WorkerOnlyConflicts lists the worker-only keys that c sets to a value
// other than worker's. An empty value means "the worker's", an equal one
// changes nothing, and the default is what a config decoded from JSON
// that leaves the key out holds (UnmarshalJSON decodes over the
// defaults): none of them conflicts, and the worker's values replace all
// of them (WithWorkerOnly).
func (c Config) WorkerOnlyConflicts(worker Config) []string {
	mine, theirs, def := c.Flatten(), worker.Flatten(), Defaults().Flatten()
	var out []string
	for _, k := range workerOnly {
		v := mine[k]
		if !reflect.ValueOf(v).IsZero() && v != theirs[k] && v != def[k] && !redactedFrom(v, theirs[k]) {
			out = append(out, k)
		}
	}
	return out
}

// redactedFrom reports whether v is the worker's own URL w as history
// records it (RedactURL): a config carried from a resolved one (a child
// session, the next run) holds the worker's endpoints redacted, and
// WithWorkerOnly puts the worker's own back.
func redactedFrom(v, w any) bool {
	vs, ok1 := v.(string)
	ws, ok2 := w.(string)
	return ok1 && ok2 && ws != "" && vs == RedactURL(ws)
}

// WithWorkerOnly is c with every worker-only value taken from worker.
// Field by field, not by reflection: workflow code calls it (through
// WithoutWorkerOnly), and a test checks it against workerOnly.
func (c Config) WithWorkerOnly(worker Config) Config {
	c.LLM.BaseURL, c.LLM.APIKey = worker.LLM.BaseURL, worker.LLM.APIKey
	c.Embed.BaseURL, c.Embed.APIKey = worker.Embed.BaseURL, worker.Embed.APIKey
	c.Eval.JudgeBaseURL, c.Eval.JudgeAPIKey, c.Eval.OutDir = worker.Eval.JudgeBaseURL, worker.Eval.JudgeAPIKey, worker.Eval.OutDir
	r, w := &c.Research, worker.Research
	r.SearxngURL, r.WikipediaURL, r.ArxivURL, r.WhisperURL = w.SearxngURL, w.WikipediaURL, w.ArxivURL, w.WhisperURL
	r.TavilyURL, r.TavilyAPIKey, r.BraveURL, r.BraveAPIKey = w.TavilyURL, w.TavilyAPIKey, w.BraveURL, w.BraveAPIKey
	r.CorpusDir, r.CorpusIndexDir, r.MediaDir = w.CorpusDir, w.CorpusIndexDir, w.MediaDir
	r.BrowserPath, r.PdftotextPath, r.FFmpegPath = w.BrowserPath, w.PdftotextPath, w.FFmpegPath
	g, wg := &c.Graph, worker.Graph
	g.Path, g.Neo4jURI, g.Neo4jUser, g.Neo4jPassword, g.Neo4jDatabase = wg.Path, wg.Neo4jURI, wg.Neo4jUser, wg.Neo4jPassword, wg.Neo4jDatabase
	return c
}

// WithoutWorkerOnly is c with every worker-only value empty: what a
// client sends, and what a session carries into its next run, so that the
// worker that runs it fills in its own.
func (c Config) WithoutWorkerOnly() Config {
	return c.WithWorkerOnly(Config{})
}
