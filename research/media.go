package research

import (
	"io"
	"path"
	"strings"

	"github.com/lethe-research/lethe/graph"
)

// MediaExtractor is the corpus extractor for audio and video files: the
// file's text is its transcript, which the Transcribe activity produces
// later, so the document carries no text (BM25 finds it by its file name)
// and one MediaRef with the corpus URL.
func MediaExtractor(r io.Reader, url string) (Document, error) {
	n, err := io.Copy(io.Discard, r)
	if err != nil {
		return Document{}, err
	}
	name := path.Base(url)
	ext := strings.ToLower(path.Ext(name))
	title := strings.NewReplacer("_", " ", "-", " ").Replace(strings.TrimSuffix(name, path.Ext(name)))
	return Document{
		URL: url, Title: title, Kind: graph.KindTranscript, Bytes: int(n),
		Media: []MediaRef{{URL: url, MIMEType: mediaExts[ext], Bytes: n}},
	}, nil
}

// MediaExtractors maps every media extension to MediaExtractor, for
// CorpusConfig.Extractors.
func MediaExtractors() map[string]Extractor {
	out := map[string]Extractor{}
	for ext := range mediaExts {
		out[ext] = MediaExtractor
	}
	return out
}
