package config

import (
	"fmt"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"https://api.example.com/v1?model=x", "https://api.example.com/v1?model=x"},
		{"http://alice:s3cret@10.0.0.5:8080/v1", "http://REDACTED@10.0.0.5:8080/v1"},
		{"http://tokenonly@host/", "http://REDACTED@host/"},
		{"https://host/search?q=dendrites&key=AIzaSECRET&format=json", "https://host/search?q=dendrites&key=REDACTED&format=json"},
		{"https://host/?api_key=A&access_token=B&X-Amz-Signature=C&client_secret=D&password=E", "https://host/?api_key=REDACTED&access_token=REDACTED&X-Amz-Signature=REDACTED&client_secret=REDACTED&password=REDACTED"},
		{"http://u:p@host/%zz?token=T", "http://REDACTED@host/%zz?token=REDACTED"}, // unparsable escape
		{"bolt://neo4j:pw@graph:7687", "bolt://REDACTED@graph:7687"},
	} {
		if got := RedactURL(c.in); got != c.want {
			t.Errorf("RedactURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	err := fmt.Errorf(`chat at http://bob:hunter2@127.0.0.1:1/v1: Post "http://bob:hunter2@127.0.0.1:1/v1/chat/completions?key=K": dial tcp: refused`)
	got := RedactText(err.Error())
	if strings.Contains(got, "hunter2") || strings.Contains(got, "=K") || !strings.Contains(got, "127.0.0.1:1/v1/chat/completions") {
		t.Fatalf("RedactText: %s", got)
	}
}
