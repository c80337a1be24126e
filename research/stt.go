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

// Inference sends one WAV file and returns the transcript text.
func (w *WhisperClient) Inference(ctx context.Context, wavPath string) (string, error) {
	base, err := url.Parse(strings.TrimSuffix(strings.TrimSpace(w.BaseURL), "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return "", fmt.Errorf("research: whisper URL %q is not an http(s) URL", w.BaseURL)
	}
	f, err := os.Open(wavPath)
	if err != nil {
		return "", fmt.Errorf("research: whisper input: %w", err)
	}
	defer f.Close()

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, filepath.Base(wavPath)))
	h.Set("Content-Type", "audio/wav")
	part, err := mw.CreatePart(h)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(part, f); err != nil {
		return "", fmt.Errorf("research: whisper input: %w", err)
	}
	fields := [][2]string{
		{"response_format", "json"},
		{"temperature", "0.0"},
		{"temperature_inc", "0.2"},
		{"translate", strconv.FormatBool(w.Translate)},
	}
	if w.Language != "" {
		fields = append(fields, [2]string{"language", w.Language})
	}
	for _, kv := range fields {
		if err := mw.WriteField(kv[0], kv[1]); err != nil {
			return "", err
		}
	}
	if err := mw.Close(); err != nil {
		return "", err
	}

	timeout := w.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, base.String()+"/inference", &body)
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Accept", "application/json")
	hc := w.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("research: whisper %s: %w", base, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return "", fmt.Errorf("research: whisper answer: %w", err)
	}
	var out struct {
		Text  *string `json:"text"`
		Error string  `json:"error"`
	}
	jerr := json.Unmarshal(raw, &out)
	if resp.StatusCode != http.StatusOK || out.Error != "" {
		msg := out.Error
		if msg == "" {
			msg = collapseSpace(string(raw))
			if len(msg) > 200 {
				msg = msg[:200] + "…"
			}
		}
		return "", fmt.Errorf("research: whisper: HTTP %d: %s", resp.StatusCode, msg)
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

// ToWAV converts any media ffmpeg reads into 16 kHz mono 16-bit PCM WAV,
// the input whisper.cpp expects, cut at maxDuration (0 = no cut). The
// first audio stream is used; video is dropped.
func ToWAV(ctx context.Context, ffmpeg, in, out string, maxDuration time.Duration) error {
	if ffmpeg == "" {
		ffmpeg = "ffmpeg"
	}
	args := []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", in, "-vn", "-map", "0:a:0", "-ac", "1", "-ar", "16000", "-c:a", "pcm_s16le"}
	if maxDuration > 0 {
		args = append(args, "-t", strconv.FormatFloat(maxDuration.Seconds(), 'f', 3, 64))
	}
	args = append(args, "-f", "wav", out)
	cmd := exec.CommandContext(ctx, ffmpeg, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 300 {
			msg = msg[len(msg)-300:]
		}
		return fmt.Errorf("research: ffmpeg %s: %v: %s", filepath.Base(in), err, msg)
	}
	return nil
}

// Transcriber is the STT pipeline of the Transcribe activity: media →
// 16 kHz mono WAV (ffmpeg) → whisper.cpp /inference.
type Transcriber struct {
	Whisper     *WhisperClient
	FFmpeg      string        // "" = ffmpeg on PATH
	MaxDuration time.Duration // audio beyond this is cut; 0 = none
	TmpDir      string        // for the WAV; "" = os.TempDir()
}

// Check reports whether ffmpeg can be found.
func (t *Transcriber) Check() error {
	ff := t.FFmpeg
	if ff == "" {
		ff = "ffmpeg"
	}
	if _, err := exec.LookPath(ff); err != nil {
		return fmt.Errorf("research: ffmpeg: %w", err)
	}
	return nil
}

// ErrNoSpeech is returned when whisper found no words.
var ErrNoSpeech = errors.New("research: no speech in the media")

// Transcribe converts mediaPath and sends it to whisper.
func (t *Transcriber) Transcribe(ctx context.Context, mediaPath string) (string, error) {
	if t.Whisper == nil {
		return "", errors.New("research: no whisper server configured")
	}
	dir, err := os.MkdirTemp(t.TmpDir, "lethe-stt-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	wav := filepath.Join(dir, "audio.wav")
	if err := ToWAV(ctx, t.FFmpeg, mediaPath, wav, t.MaxDuration); err != nil {
		return "", err
	}
	text, err := t.Whisper.Inference(ctx, wav)
	if err != nil {
		return "", err
	}
	if text == "" {
		return "", ErrNoSpeech
	}
	return text, nil
}
