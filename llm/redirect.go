package llm

import (
	"errors"
	"fmt"
	"net/http"
)

// ErrKeyedRedirect: a server the worker sends an API key to answered with
// a redirect. Go keeps custom key headers on every redirect, and
// Authorization on one to the same host name, even from https to http or
// to another port; so the client that carries a key follows none.
var ErrKeyedRedirect = errors.New("answered with a redirect, which a request carrying an API key never follows (the key would go along); set the URL to where it redirects")

// NoRedirects is a copy of hc (nil: a fresh client) that follows no
// redirect: every client that sends a key uses it. hc itself is shared
// with other clients, so it is left as it is.
func NoRedirects(hc *http.Client) *http.Client {
	c := *httpClient(hc)
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		return fmt.Errorf("%w (to %s://%s)", ErrKeyedRedirect, req.URL.Scheme, req.URL.Host)
	}
	return &c
}
