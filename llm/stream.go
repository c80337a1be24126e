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
	st := sseState{onProgress: onProgress}
	for !st.done {
		line, rerr := br.ReadString('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return "", "", st.out, fmt.Errorf("read stream after %d chunks: %w", st.chunks, rerr)
		}
		if err := st.line(strings.TrimRight(line, "\r\n")); err != nil {
			return "", "", st.out, err
		}
		if errors.Is(rerr, io.EOF) {
			if err := st.eof(); err != nil {
				return "", "", st.out, err
			}
			break
		}
	}
	if st.chunks == 0 {
		return "", "", st.out, fmt.Errorf("%w: empty stream", ErrBadResponse)
	}
	return st.cb.String(), st.rb.String(), st.out, nil
}

// sseState is the state of one stream between lines. It is a struct rather
// than closure variables so that each SSE rule (line framing, event
// dispatch, chunk accumulation) is a step that can be read on its own.
type sseState struct {
	onProgress func(int)
	cb, rb     strings.Builder // content and reasoning so far
	data       []string        // data lines of the pending event
	event      string          // event type of the pending event
	chunks     int             // chunks decoded
	done       bool            // [DONE] seen
	finished   bool            // a non-empty finish_reason seen
	out        ChatResponse
}

// line handles one SSE line without its line ending. Unknown fields and
// garbage are ignored, as the SSE spec requires, so that a proxy adding
// id:/retry: lines or keep-alive comments does not break the stream.
func (st *sseState) line(line string) error {
	switch {
	case line == "":
		return st.dispatch()
	case strings.HasPrefix(line, ":"):
		// comment / keep-alive
	case strings.HasPrefix(line, "data:"):
		st.data = append(st.data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
	case strings.HasPrefix(line, "event:"):
		st.event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
	default:
		// other SSE fields (id:, retry:) or garbage: ignored
	}
	return nil
}

// eof dispatches an event left without its blank line and rejects a stream
// that stopped without saying it was complete: a connection cut mid-answer
// must not pass for a short answer.
func (st *sseState) eof() error {
	if err := st.dispatch(); err != nil {
		return err
	}
	if !st.done && !st.finished {
		return fmt.Errorf("stream ended after %d chunks without [DONE] or finish_reason: %w", st.chunks, io.ErrUnexpectedEOF)
	}
	return nil
}

// dispatch decodes the pending event. Error events and undecodable chunks
// are ErrBadResponse so that the caller's retry policy treats them like a bad
// non-streamed body.
func (st *sseState) dispatch() error {
	defer func() { st.data, st.event = st.data[:0], "" }()
	if len(st.data) == 0 {
		return nil
	}
	payload := strings.Join(st.data, "\n")
	if strings.TrimSpace(payload) == "[DONE]" {
		st.done = true
		return nil
	}
	var ch streamChunk
	if err := json.Unmarshal([]byte(payload), &ch); err != nil {
		return fmt.Errorf("%w: stream chunk %d: %v (%q)", ErrBadResponse, st.chunks+1, err, snippet(payload, 200))
	}
	if ch.Error != nil || st.event == "error" {
		msg := payload
		if ch.Error != nil {
			msg = ch.Error.String()
		}
		return fmt.Errorf("%w: error event in stream after %d chunks: %s", ErrBadResponse, st.chunks, msg)
	}
	st.add(&ch)
	return nil
}

// add accumulates one decoded chunk. Servers disagree on where reasoning
// goes (reasoning_content or reasoning), so either is taken, the former
// first; progress is reported every progressEvery chunks to keep the
// callback (a heartbeat) cheap.
func (st *sseState) add(ch *streamChunk) {
	st.chunks++
	if ch.Model != "" {
		st.out.Model = ch.Model
	}
	if ch.Usage != nil {
		st.out.Usage = *ch.Usage
	}
	if len(ch.Choices) > 0 {
		d := ch.Choices[0].Delta
		st.cb.WriteString(d.Content)
		if d.ReasoningContent != "" {
			st.rb.WriteString(d.ReasoningContent)
		} else {
			st.rb.WriteString(d.Reasoning)
		}
		if fr := ch.Choices[0].FinishReason; fr != nil && *fr != "" {
			st.out.FinishReason = *fr
			st.finished = true
		}
	}
	if st.onProgress != nil && st.chunks%progressEvery == 0 {
		st.onProgress(EstimateTokens(st.cb.String()) + EstimateTokens(st.rb.String()))
	}
}
