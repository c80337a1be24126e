package config

import (
	"net/url"
	"regexp"
	"strings"
)

// redacted replaces a secret in a URL.
const redacted = "REDACTED"

// secretParam matches query parameter names that carry credentials:
// key, api_key, apikey, access_token, token, secret, password, sig, ...
var secretParam = regexp.MustCompile(`(?i)(^|[_.-])(key|apikey|token|secret|password|passwd|pwd|auth|authorization|signature|sig|credential|credentials|session)$|^(x-amz-|x-goog-)`)

// urlInText finds URLs in free text (an error message, a log line).
var urlInText = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)

// RedactURL returns raw with its userinfo and the values of
// secret-looking query parameters replaced by REDACTED, the rest as it
// was: a base URL such as http://user:pass@host/ or https://api/?key=...
// is how some servers take their credentials, and a URL is copied into
// errors, logs and workflow history, where a credential must not go. The
// one redaction every such place uses.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return redactUnparsed(raw)
	}
	q := redactQuery(u.RawQuery)
	if u.User == nil && q == u.RawQuery {
		return raw // nothing secret: the URL exactly as written
	}
	if u.User != nil {
		u.User = url.User(redacted)
	}
	u.RawQuery = q
	return u.String()
}

// RedactText applies RedactURL to every URL in s.
func RedactText(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return urlInText.ReplaceAllStringFunc(s, RedactURL)
}

func redactQuery(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, _, hasValue := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasValue && secretParam.MatchString(name) {
			parts[i] = k + "=" + redacted
		}
	}
	return strings.Join(parts, "&")
}

// redactUnparsed handles a URL url.Parse refuses (a bad escape, a control
// character): userinfo is cut between "//" and the last "@" of the
// authority, and the query is redacted as text.
func redactUnparsed(raw string) string {
	s := raw
	if i := strings.Index(s, "//"); i >= 0 {
		rest := s[i+2:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
			s = s[:i+2] + redacted + rest[at:]
		}
	}
	if base, q, ok := strings.Cut(s, "?"); ok {
		frag := ""
		if j := strings.IndexByte(q, '#'); j >= 0 {
			q, frag = q[:j], q[j:]
		}
		s = base + "?" + redactQuery(q) + frag
	}
	return s
}

// Redacted returns c with RedactURL applied to every service URL: the
// config a session resolves is recorded in its workflow history. Activities
// call services through the worker's own config, so nothing should read
// these fields back for a connection.
func (c Config) Redacted() Config {
	for _, u := range []*string{&c.LLM.BaseURL, &c.Embed.BaseURL, &c.Eval.JudgeBaseURL, &c.Graph.Neo4jURI,
		&c.Research.SearxngURL, &c.Research.WhisperURL, &c.Research.WikipediaURL, &c.Research.ArxivURL,
		&c.Research.TavilyURL, &c.Research.BraveURL} {
		if *u != "" {
			*u = RedactURL(*u)
		}
	}
	return c
}
