package llm

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// progressEvery is how many stream chunks pass between progress callbacks.
const progressEvery = 32

// streamChunk is one "data:" event of a chat completion stream.
type streamChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage    `json:"usage"`
	Error *apiError `json:"error"`
}

// readStream consumes a server-sent-events chat stream: it accumulates the
// content and reasoning deltas, keeps the last usage and finish reason, and
// calls onProgress with the estimated completion tokens every progressEvery
// chunks (Complete makes the final call).
func readStream(r io.Reader, onProgress func(int)) (content, reasoning string, out ChatResponse, err error) {
	br := bufio.NewReader(io.LimitReader(r, maxResponseBody))
	var cb, rb strings.Builder
	var data []string
	event := ""
	chunks := 0
	done := false
	finished := false

	dispatch := func() error {
		defer func() { data, event = data[:0], "" }()
		if len(data) == 0 {
			return nil
		}
		payload := strings.Join(data, "\n")
		if strings.TrimSpace(payload) == "[DONE]" {
			done = true
			return nil
		}
		var ch streamChunk
		if err := json.Unmarshal([]byte(payload), &ch); err != nil {
			return fmt.Errorf("%w: stream chunk %d: %v (%q)", ErrBadResponse, chunks+1, err, snippet(payload, 200))
		}
		if ch.Error != nil || event == "error" {
			msg := payload
			if ch.Error != nil {
				msg = ch.Error.String()
			}
			return fmt.Errorf("%w: error event in stream after %d chunks: %s", ErrBadResponse, chunks, msg)
		}
		chunks++
		if ch.Model != "" {
			out.Model = ch.Model
		}
		if ch.Usage != nil {
			out.Usage = *ch.Usage
		}
		if len(ch.Choices) > 0 {
			d := ch.Choices[0].Delta
			cb.WriteString(d.Content)
			if d.ReasoningContent != "" {
				rb.WriteString(d.ReasoningContent)
			} else {
				rb.WriteString(d.Reasoning)
			}
			if fr := ch.Choices[0].FinishReason; fr != nil && *fr != "" {
				out.FinishReason = *fr
				finished = true
			}
		}
		if onProgress != nil && chunks%progressEvery == 0 {
			onProgress(EstimateTokens(cb.String()) + EstimateTokens(rb.String()))
		}
		return nil
	}

	for !done {
		line, rerr := br.ReadString('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return "", "", out, fmt.Errorf("read stream after %d chunks: %w", chunks, rerr)
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if err := dispatch(); err != nil {
				return "", "", out, err
			}
		case strings.HasPrefix(line, ":"):
			// comment / keep-alive
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		default:
			// other SSE fields (id:, retry:) or garbage: ignored
		}
		if errors.Is(rerr, io.EOF) {
			if err := dispatch(); err != nil {
				return "", "", out, err
			}
			if !done && !finished {
				return "", "", out, fmt.Errorf("stream ended after %d chunks without [DONE] or finish_reason: %w", chunks, io.ErrUnexpectedEOF)
			}
			break
		}
	}
	if chunks == 0 {
		return "", "", out, fmt.Errorf("%w: empty stream", ErrBadResponse)
	}
	return cb.String(), rb.String(), out, nil
}
