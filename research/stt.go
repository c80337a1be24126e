package research

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lethe-research/lethe/config"
)

// WhisperClient speaks the /inference protocol of whisper.cpp's HTTP
// server (examples/server): a multipart/form-data POST with the audio in
// the "file" field and options as further fields; with response_format
// json the answer is {"text": "..."}, errors are {"error": "..."}. The
// server reads 16-bit PCM WAV (16 kHz mono is what whisper expects; the
// server's --convert flag is not relied on), so callers convert first
// (ToWAV).
type WhisperClient struct {
	BaseURL string // e.g. http://127.0.0.1:8178
	// Translate sets translate=true: speech in any language becomes English
	// text (the embedding space of the evidence is one language).
	Translate bool
	// Language hint ("" = auto-detect).
	Language string
	// Timeout of one request; <= 0 means 10 min.
	Timeout time.Duration
	// HTTP client; nil = http.DefaultClient. The whisper server is an
	// operator-configured service, not subject to the fetchers' URLPolicy.
	HTTP *http.Client
}

// maxWhisperAnswer caps the JSON answer of the whisper server.
const maxWhisperAnswer = 16 << 20

// Inference sends one WAV file and returns the transcript text. The file
// is streamed into the request body, never read whole into memory.
func (w *WhisperClient) Inference(ctx context.Context, wavPath string) (string, error) {
	base, err := url.Parse(strings.TrimSuffix(strings.TrimSpace(w.BaseURL), "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return "", fmt.Errorf("research: whisper URL %q is not an http(s) URL", config.RedactURL(w.BaseURL))
	}
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := w.request(rctx, base.String()+"/inference", wavPath)
	if err != nil {
		return "", err
	}
	hc := w.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("research: whisper %s: %w", config.RedactURL(base.String()), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxWhisperAnswer+1))
	if err != nil {
		return "", fmt.Errorf("research: whisper answer: %w", err)
	}
	if len(raw) > maxWhisperAnswer {
		return "", fmt.Errorf("research: whisper: answer exceeds %d bytes", maxWhisperAnswer)
	}
	return parseWhisperAnswer(resp.StatusCode, raw)
}

func (w *WhisperClient) fields() [][2]string {
	fields := [][2]string{
		{"response_format", "json"},
		{"temperature", "0.0"},
		{"temperature_inc", "0.2"},
		{"translate", strconv.FormatBool(w.Translate)},
	}
	if w.Language != "" {
		fields = append(fields, [2]string{"language", w.Language})
	}
	return fields
}

// request builds the multipart POST: the form fields, then the WAV file
// streamed from disk between a precomputed head and tail, so the body has
// a Content-Length (a server or proxy that refuses chunked uploads still
// takes it) while only the small multipart framing is held in memory.
func (w *WhisperClient) request(ctx context.Context, endpoint, wavPath string) (*http.Request, error) {
	fi, err := os.Stat(wavPath)
	if err != nil {
		return nil, fmt.Errorf("research: whisper input: %w", err)
	}
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	for _, kv := range w.fields() {
		if err := mw.WriteField(kv[0], kv[1]); err != nil {
			return nil, fmt.Errorf("research: whisper request: %w", err)
		}
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, filepath.Base(wavPath)))
	h.Set("Content-Type", "audio/wav")
	if _, err := mw.CreatePart(h); err != nil {
		return nil, fmt.Errorf("research: whisper request: %w", err)
	}
	prefix := bytes.Clone(head.Bytes())
	head.Reset()
	if err := mw.Close(); err != nil { // writes only the closing boundary
		return nil, fmt.Errorf("research: whisper request: %w", err)
	}
	suffix := bytes.Clone(head.Bytes())
	body := func() (io.ReadCloser, error) {
		f, err := os.Open(wavPath)
		if err != nil {
			return nil, fmt.Errorf("research: whisper input: %w", err)
		}
		return readCloser{io.MultiReader(bytes.NewReader(prefix), io.LimitReader(f, fi.Size()), bytes.NewReader(suffix)), f}, nil
	}
	rc, err := body()
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, rc)
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("research: whisper request: %w", err)
	}
	req.ContentLength = int64(len(prefix)) + fi.Size() + int64(len(suffix))
	req.GetBody = body
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Accept", "application/json")
	return req, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

func parseWhisperAnswer(status int, raw []byte) (string, error) {
	var out struct {
		Text  *string `json:"text"`
		Error string  `json:"error"`
	}
	jerr := json.Unmarshal(raw, &out)
	if status != http.StatusOK || out.Error != "" {
		msg := out.Error
		if msg == "" {
			msg = collapseSpace(string(raw))
		}
		return "", fmt.Errorf("research: whisper: HTTP %d: %s", status, truncateRunes(msg, 200))
	}
	if jerr != nil || out.Text == nil {
		return "", fmt.Errorf("research: whisper: answer is not {\"text\": ...}: %.200s", raw)
	}
	return cleanTranscript(*out.Text), nil
}

// cleanTranscript drops whisper's non-speech markers ([BLANK_AUDIO],
// [Music], (upbeat music)) and joins its lines into paragraphs.
func cleanTranscript(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		for _, marker := range []string{"[BLANK_AUDIO]", "[Music]", "[MUSIC]", "[ Silence ]", "[silence]"} {
			l = strings.ReplaceAll(l, marker, "")
		}
		l = strings.TrimSpace(l)
		if l != "" {
			lines = append(lines, l)
		}
	}
	return collapseSpace(strings.Join(lines, " "))
}

// mediaDemuxers are the input formats ffmpeg may use (-format_whitelist):
// the audio and video containers of mediaExts. Playlists and scripts
// (hls, concat, webm_dash_manifest, image sequences, lavfi) are not
// among them: a captured "audio" file that is really an HLS playlist
// would otherwise make ffmpeg fetch its segments, past the URL policy.
const mediaDemuxers = "wav,w64,mp3,ogg,flac,mov,matroska,aac,avi"

// Transcriber is the STT pipeline of the Transcribe activity: media →
// 16 kHz mono WAV (ffmpeg) → whisper.cpp /inference.
type Transcriber struct {
	Whisper     *WhisperClient
	FFmpeg      string        // "" = ffmpeg on PATH
	MaxDuration time.Duration // audio beyond this is cut; 0 = none
	TmpDir      string        // for the WAV; "" = os.TempDir()
	// ConvertTimeout bounds one ffmpeg run; <= 0 means 10 min.
	ConvertTimeout time.Duration
	// MemoryBytes is ffmpeg's address-space limit; <= 0 means
	// DefaultChildMemoryBytes.
	MemoryBytes int64
	// Limits: a transcript is cut to MaxTextBytes.
	Limits Limits
}

// Check reports whether ffmpeg can be found.
func (t *Transcriber) Check() error {
	if _, err := exec.LookPath(t.ffmpeg()); err != nil {
		return fmt.Errorf("research: ffmpeg: %w", err)
	}
	return nil
}

func (t *Transcriber) ffmpeg() string {
	if t.FFmpeg == "" {
		return "ffmpeg"
	}
	return t.FFmpeg
}

// ToWAV converts a local media file into 16 kHz mono 16-bit PCM WAV, the
// input whisper.cpp expects, cut at MaxDuration. The first audio stream is
// used; video is dropped. ffmpeg reads local files only (-protocol_whitelist
// file) in the container formats of mediaDemuxers, runs under a deadline
// and an address-space limit, and its output file is capped (-fs).
func (t *Transcriber) ToWAV(ctx context.Context, in, out string) error {
	args := []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y",
		"-protocol_whitelist", "file", "-format_whitelist", mediaDemuxers,
		"-i", "file:" + in, "-vn", "-map", "0:a:0", "-ac", "1", "-ar", "16000", "-c:a", "pcm_s16le"}
	if t.MaxDuration > 0 {
		args = append(args, "-t", strconv.FormatFloat(t.MaxDuration.Seconds(), 'f', 3, 64))
	}
	args = append(args, "-fs", strconv.FormatInt(maxWAVBytes(t.MaxDuration), 10), "-f", "wav", out)
	timeout := t.ConvertTimeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	mem := t.MemoryBytes
	if mem <= 0 {
		mem = DefaultChildMemoryBytes
	}
	// "file:" keeps a colon in the name from reading as a protocol. ffmpeg
	// writes the WAV to a file (a piped WAV has no sizes in its
	// header); its stdout carries nothing and is capped all the same.
	res, err := runChild(ctx, childSpec{Path: t.ffmpeg(), Args: args, Timeout: timeout, MemoryBytes: mem, MaxStdout: 64 << 10})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		msg := strings.TrimSpace(res.Stderr)
		if len(msg) > 300 {
			msg = msg[len(msg)-300:]
		}
		return fmt.Errorf("research: ffmpeg %s: %w: %s", filepath.Base(in), err, msg)
	}
	return nil
}

// maxWAVBytes is the size of d of 16 kHz mono 16-bit audio plus room for
// the header; an hour when d is 0.
func maxWAVBytes(d time.Duration) int64 {
	if d <= 0 {
		d = time.Hour
	}
	return int64(d.Seconds()*32000) + 64<<10
}

// ErrNoSpeech is returned when whisper found no words.
var ErrNoSpeech = errors.New("research: no speech in the media")

// Transcribe converts mediaPath and sends it to whisper. The WAV lives in
// a temporary directory removed on every path (the child is reaped before).
func (t *Transcriber) Transcribe(ctx context.Context, mediaPath string) (string, error) {
	if t.Whisper == nil {
		return "", errors.New("research: no whisper server configured")
	}
	dir, err := os.MkdirTemp(t.TmpDir, "lethe-stt-*")
	if err != nil {
		return "", fmt.Errorf("research: stt temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	wav := filepath.Join(dir, "audio.wav")
	if err := t.ToWAV(ctx, mediaPath, wav); err != nil {
		return "", err
	}
	text, err := t.Whisper.Inference(ctx, wav)
	if err != nil {
		return "", err
	}
	if text == "" {
		return "", ErrNoSpeech
	}
	text, _ = t.Limits.Text(text)
	return text, nil
}
