package workflows_test

import (
	"encoding/json"
	"testing"
)

// chatBody is what the workflow tests read of a chat request's JSON body:
// its seed and its structured-output schema.
type chatBody struct {
	Seed           int         `json:"seed"`
	ResponseFormat *jsonFormat `json:"response_format"`
}

// jsonFormat is a request's response_format.json_schema; nil in a
// chatBody when the call asks for free text.
type jsonFormat struct {
	JSONSchema struct {
		Name   string          `json:"name"`
		Strict bool            `json:"strict"`
		Schema json.RawMessage `json:"schema"`
	} `json:"json_schema"`
}

// schema is the request's JSON schema part, zero for free text.
func (b chatBody) schema() (name string, strict bool, schema json.RawMessage) {
	if b.ResponseFormat == nil {
		return "", false, nil
	}
	js := b.ResponseFormat.JSONSchema
	return js.Name, js.Strict, js.Schema
}

func decodeChatBody(t *testing.T, raw string) chatBody {
	t.Helper()
	var b chatBody
	if err := json.Unmarshal([]byte(raw), &b); err != nil {
		t.Fatalf("chat request body: %v", err)
	}
	return b
}
