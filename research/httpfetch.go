package research

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lethe-research/lethe/graph"
)

// HTTPFetcherConfig configures direct HTTP fetching: PDFs, media downloads,
// and pages when no browser is available.
type HTTPFetcherConfig struct {
	Policy URLPolicy
	// MaxPageBytes caps an HTML or text response (longer ones are cut and
	// the cut text is extracted). Default 4 MiB.
	MaxPageBytes int64
	// MaxMediaBytes caps a PDF or media response (longer ones are refused:
	// a cut PDF or audio file is unreadable). Default 64 MiB.
	MaxMediaBytes int64
	// Timeout of one request including the body. Default 60 s.
	Timeout      time.Duration
	MaxRedirects int // default 10
	UserAgent    string
	// PDF converts PDFs; nil (or an unavailable executable) refuses them.
	PDF *PDFConverter
	// MediaDir receives downloaded media files; "" = <tmp>/lethe-media.
	MediaDir string
	// Resolver for the policy's DNS checks; nil = net.DefaultResolver.
	Resolver *net.Resolver
	// Limits bound titles, URLs and text of what is fetched. Policy's
	// MaxURLBytes defaults to Limits.MaxURLBytes: a longer URL is refused,
	// never fetched, also as a redirect target.
	Limits Limits
	// SkipMedia: audio and video are not downloaded (no speech-to-text is
	// configured, so nothing would read them); a media URL is an error.
	SkipMedia bool
}

// HTTPFetcher fetches URLs by plain HTTP under a URLPolicy: the URL is
// checked before the request, every redirect target is checked again
// (CheckRedirect), and every connection is checked at dial time
// (DialControl), so neither a redirect nor a DNS answer that changes
// between check and connect can reach a refused address. It never uses an
// environment proxy (a proxy would make the dial check meaningless) and
// keeps no cookies.
type HTTPFetcher struct {
	cfg    HTTPFetcherConfig
	client *http.Client
}

// DefaultUserAgent is sent by the HTTP fetcher and the browser.
const DefaultUserAgent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36 lethe-research/1"

// NewHTTPFetcher returns a fetcher with its own policy-enforcing client.
func NewHTTPFetcher(cfg HTTPFetcherConfig) *HTTPFetcher {
	if cfg.MaxPageBytes <= 0 {
		cfg.MaxPageBytes = 4 << 20
	}
	if cfg.MaxMediaBytes <= 0 {
		cfg.MaxMediaBytes = 64 << 20
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Minute
	}
	if cfg.MaxRedirects <= 0 {
		cfg.MaxRedirects = 10
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	if cfg.MediaDir == "" {
		cfg.MediaDir = filepath.Join(os.TempDir(), "lethe-media")
	}
	cfg.Limits = cfg.Limits.withDefaults()
	if cfg.Policy.MaxURLBytes <= 0 {
		cfg.Policy.MaxURLBytes = cfg.Limits.MaxURLBytes
	}
	if cfg.PDF != nil {
		pdf := *cfg.PDF
		if pdf.Limits == (Limits{}) {
			pdf.Limits = cfg.Limits
		}
		cfg.PDF = &pdf
	}
	return &HTTPFetcher{cfg: cfg, client: NewPolicyClient(cfg.Policy, cfg.Resolver, cfg.MaxRedirects)}
}

// NewPolicyClient returns an HTTP client that enforces p on every redirect
// (CheckRedirect) and every connection (DialControl), ignores proxy
// settings of the environment and keeps no cookies.
func NewPolicyClient(p URLPolicy, resolver *net.Resolver, maxRedirects int) *http.Client {
	d := &net.Dialer{Timeout: 15 * time.Second, KeepAlive: 30 * time.Second, Control: p.DialControl, Resolver: resolver}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          32,
		IdleConnTimeout:       60 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("research: %s: more than %d redirects", via[0].URL, maxRedirects)
			}
			if err := p.Check(req.Context(), req.URL.String(), resolver); err != nil {
				return fmt.Errorf("redirect from %s: %w", via[len(via)-1].URL, err)
			}
			return nil
		},
	}
}

// Client is the fetcher's policy-enforcing client.
func (f *HTTPFetcher) Client() *http.Client { return f.client }

// Policy is the fetcher's URL policy.
func (f *HTTPFetcher) Policy() URLPolicy { return f.cfg.Policy }

// ErrMediaSkipped is returned for audio and video when SkipMedia is set.
var ErrMediaSkipped = errors.New("research: audio/video skipped (no speech-to-text server configured)")

// HTTPStatusError is a response with status >= 400.
type HTTPStatusError struct {
	URL    string
	Status int
}

func (e *HTTPStatusError) Error() string {
	return fmt.Sprintf("research: %s: HTTP %d %s", e.URL, e.Status, http.StatusText(e.Status))
}

func (f *HTTPFetcher) get(ctx context.Context, raw string) (*http.Response, context.CancelFunc, error) {
	if err := f.cfg.Policy.Check(ctx, raw, f.cfg.Resolver); err != nil {
		return nil, nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, raw, nil)
	if err != nil {
		cancel()
		return nil, nil, refused(raw, "not a valid request URL: "+err.Error())
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/pdf,text/plain;q=0.9,audio/*;q=0.8,video/*;q=0.8,*/*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		cancel()
		var ue *url.Error
		if errors.As(err, &ue) && errors.Is(ue.Err, ErrRefused) {
			return nil, nil, ue.Err
		}
		return nil, nil, err
	}
	if resp.StatusCode >= 400 {
		resp.Body.Close()
		cancel()
		return nil, nil, &HTTPStatusError{URL: raw, Status: resp.StatusCode}
	}
	return resp, cancel, nil
}

// ContentKind classifies a response by its media type (and, for generic
// types, the URL's extension): "html", "text", "pdf", "media" or "".
func ContentKind(contentType, rawURL string) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	mt = strings.ToLower(mt)
	switch {
	case mt == "application/pdf" || mt == "application/x-pdf":
		return "pdf"
	case mt == "text/html" || mt == "application/xhtml+xml":
		return "html"
	case mt == "text/plain" || mt == "text/markdown" || mt == "text/x-markdown":
		return "text"
	case strings.HasPrefix(mt, "audio/") || strings.HasPrefix(mt, "video/") || mt == "application/ogg":
		return "media"
	case mt == "" || mt == "application/octet-stream" || mt == "binary/octet-stream":
		return kindByExt(rawURL)
	}
	return ""
}

// mediaExts are the file extensions treated as audio or video.
var mediaExts = map[string]string{
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg", ".oga": "audio/ogg", ".opus": "audio/opus",
	".flac": "audio/flac", ".m4a": "audio/mp4", ".aac": "audio/aac", ".weba": "audio/webm",
	".mp4": "video/mp4", ".m4v": "video/mp4", ".webm": "video/webm", ".mkv": "video/x-matroska", ".mov": "video/quicktime",
	".ogv": "video/ogg", ".avi": "video/x-msvideo",
}

// MediaExtensions lists the audio and video file extensions the corpus and
// the fetchers recognise, sorted.
func MediaExtensions() []string {
	out := make([]string, 0, len(mediaExts))
	for e := range mediaExts {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

func kindByExt(rawURL string) string {
	p := rawURL
	if u, err := url.Parse(rawURL); err == nil {
		p = u.Path
	}
	ext := strings.ToLower(path.Ext(p))
	switch {
	case ext == ".pdf":
		return "pdf"
	case ext == ".html" || ext == ".htm" || ext == ".xhtml":
		return "html"
	case ext == ".txt" || ext == ".md" || ext == ".markdown":
		return "text"
	case mediaExts[ext] != "":
		return "media"
	}
	return ""
}

// LooksLikePDF reports whether a URL's path ends in .pdf: the fetchers send
// such URLs straight to the PDF path instead of the browser.
func LooksLikePDF(rawURL string) bool { return kindByExt(rawURL) == "pdf" }

// LooksLikeMedia reports whether a URL's path has an audio or video
// extension.
func LooksLikeMedia(rawURL string) bool { return kindByExt(rawURL) == "media" }

// Fetch implements Fetcher for http(s) URLs: HTML, text, PDF (through the
// PDF converter) and media (saved to MediaDir and returned as the
// document's only MediaRef). The document is bounded by Limits.
func (f *HTTPFetcher) Fetch(ctx context.Context, raw string) (Document, error) {
	doc, err := f.fetch(ctx, raw)
	if err != nil {
		return Document{}, err
	}
	return f.cfg.Limits.Document(doc, raw), nil
}

func (f *HTTPFetcher) fetch(ctx context.Context, raw string) (Document, error) {
	resp, cancel, err := f.get(ctx, raw)
	if err != nil {
		return Document{}, err
	}
	defer cancel()
	defer resp.Body.Close()
	final := resp.Request.URL.String()
	ct := resp.Header.Get("Content-Type")
	lim := f.cfg.Limits
	switch ContentKind(ct, final) {
	case "pdf":
		return f.readPDF(ctx, resp, final)
	case "media":
		if f.cfg.SkipMedia {
			return Document{}, fmt.Errorf("%w: %s", ErrMediaSkipped, raw)
		}
		ref, err := f.saveMedia(resp, final, 0)
		if err != nil {
			return Document{}, err
		}
		return Document{URL: final, Title: path.Base(resp.Request.URL.Path), Kind: graph.KindTranscript, Bytes: int(ref.Bytes), Media: []MediaRef{ref}}, nil
	case "html":
		return lim.ExtractHTML(io.LimitReader(resp.Body, f.cfg.MaxPageBytes), final)
	case "text":
		fn, _ := lim.ExtractorForType(ct)
		if fn == nil {
			fn = lim.ExtractText
			if k := strings.ToLower(path.Ext(resp.Request.URL.Path)); k == ".md" || k == ".markdown" {
				fn = lim.ExtractMarkdown
			}
		}
		return fn(io.LimitReader(resp.Body, f.cfg.MaxPageBytes), final)
	}
	return Document{}, fmt.Errorf("research: %s: unsupported content type %.100q", final, ct)
}

func (f *HTTPFetcher) readPDF(ctx context.Context, resp *http.Response, final string) (Document, error) {
	if f.cfg.PDF == nil {
		return Document{}, fmt.Errorf("research: %s: PDF conversion is not configured", final)
	}
	if resp.ContentLength > f.cfg.MaxMediaBytes {
		return Document{}, refused(final, fmt.Sprintf("PDF of %d bytes exceeds the %d-byte limit", resp.ContentLength, f.cfg.MaxMediaBytes))
	}
	lr := &io.LimitedReader{R: resp.Body, N: f.cfg.MaxMediaBytes + 1}
	doc, err := f.cfg.PDF.Extract(ctx, lr, final)
	if err != nil {
		return Document{}, err
	}
	if lr.N <= 0 {
		return Document{}, refused(final, fmt.Sprintf("PDF exceeds the %d-byte limit", f.cfg.MaxMediaBytes))
	}
	if doc.Title == "" {
		doc.Title = path.Base(resp.Request.URL.Path)
	}
	return doc, nil
}

// DownloadMedia fetches a media URL into MediaDir and returns its
// reference. The file name is a hash of the URL, so a retried download
// replaces the same file. Responses under minBytes are refused (not worth
// transcribing), as are non-media content types and files over
// MaxMediaBytes.
func (f *HTTPFetcher) DownloadMedia(ctx context.Context, raw string, minBytes int64) (MediaRef, error) {
	if f.cfg.SkipMedia {
		return MediaRef{}, fmt.Errorf("%w: %s", ErrMediaSkipped, raw)
	}
	resp, cancel, err := f.get(ctx, raw)
	if err != nil {
		return MediaRef{}, err
	}
	defer cancel()
	defer resp.Body.Close()
	final := resp.Request.URL.String()
	if ContentKind(resp.Header.Get("Content-Type"), final) != "media" {
		return MediaRef{}, fmt.Errorf("research: %s: content type %.100q is not audio or video", final, resp.Header.Get("Content-Type"))
	}
	return f.saveMedia(resp, raw, minBytes)
}

func (f *HTTPFetcher) saveMedia(resp *http.Response, key string, minBytes int64) (MediaRef, error) {
	final := resp.Request.URL.String()
	if resp.ContentLength > f.cfg.MaxMediaBytes {
		return MediaRef{}, refused(final, fmt.Sprintf("media of %d bytes exceeds the %d-byte limit", resp.ContentLength, f.cfg.MaxMediaBytes))
	}
	if resp.ContentLength >= 0 && resp.ContentLength < minBytes {
		return MediaRef{}, fmt.Errorf("research: %s: media of %d bytes is under the %d-byte minimum", final, resp.ContentLength, minBytes)
	}
	if err := privateDir(f.cfg.MediaDir); err != nil {
		return MediaRef{}, err
	}
	mt, _, _ := mime.ParseMediaType(truncateUTF8(resp.Header.Get("Content-Type"), 256))
	ext := strings.ToLower(path.Ext(resp.Request.URL.Path))
	if mediaExts[ext] == "" {
		ext = ".media"
	}
	if mt == "" || mt == "application/octet-stream" {
		mt = mediaExts[ext]
	}
	sum := sha256.Sum256([]byte(key))
	tmp, err := os.CreateTemp(f.cfg.MediaDir, ".part-*")
	if err != nil {
		return MediaRef{}, fmt.Errorf("research: media file: %w", err)
	}
	// One file per download, not per URL: pages that embed the same media
	// are transcribed side by side, and each Transcribe deletes its files
	// when done; a shared file would vanish under the others.
	dst := filepath.Join(f.cfg.MediaDir, hex.EncodeToString(sum[:12])+"-"+strings.TrimPrefix(filepath.Base(tmp.Name()), ".part-")+ext)
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, io.LimitReader(resp.Body, f.cfg.MaxMediaBytes+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return MediaRef{}, fmt.Errorf("research: download %s: %w", final, err)
	}
	if n > f.cfg.MaxMediaBytes {
		return MediaRef{}, refused(final, fmt.Sprintf("media exceeds the %d-byte limit", f.cfg.MaxMediaBytes))
	}
	if n < minBytes {
		return MediaRef{}, fmt.Errorf("research: %s: media of %d bytes is under the %d-byte minimum", final, n, minBytes)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return MediaRef{}, fmt.Errorf("research: media file: %w", err)
	}
	return MediaRef{URL: final, Path: dst, MIMEType: mt, Bytes: n}, nil
}

// SweepMedia removes media files (and partial downloads) in MediaDir last
// modified before olderThan ago: captured files whose Transcribe never ran
// on this worker (it ran elsewhere, or the worker was killed in between).
// It returns how many it removed.
func (f *HTTPFetcher) SweepMedia(olderThan time.Duration) (int, error) {
	entries, err := os.ReadDir(f.cfg.MediaDir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("research: sweep media dir: %w", err)
	}
	cutoff := time.Now().Add(-olderThan)
	n := 0
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || info.ModTime().After(cutoff) {
			continue
		}
		if os.Remove(filepath.Join(f.cfg.MediaDir, e.Name())) == nil {
			n++
		}
	}
	return n, nil
}
