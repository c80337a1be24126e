// Package llm holds the OpenAI-compatible clients Lethe uses to talk to its
// models: a chat client for single-turn reasoning calls (thinking-budget
// parameters, <think> / reasoning_content extraction, JSON-schema response
// format, streaming with progress callbacks, token usage) and an embedding
// client (query/document prefixes, batching, L2 normalisation, dimension
// probe), each with a health probe that sends the client's key like every
// other request.
//
// The clients are stateless: every call is an independent HTTP request built
// from the client's immutable configuration and the call's arguments; there
// is no conversation history and no package-level state. They work against
// any server speaking the OpenAI API: llama.cpp's llama-server, Ollama, vLLM,
// OpenAI itself, or the scripted test server in package llmtest.
//
// Base URLs are given without the "/v1" suffix ("http://127.0.0.1:8080");
// a trailing "/v1" or "/" is tolerated and removed.
//
// Errors are wrapped with the operation and URL. HTTP failures are
// *HTTPError values; IsRetryable tells whether retrying the call can help
// (429, 408, 5xx, transport failures, timeouts and truncated streams are
// retryable; other 4xx, malformed answers and invalid requests are not).
// A refused key (401, 403: IsAuth) names the setting that holds it, and a
// server's Retry-After is kept in the HTTPError (RetryAfterOf) for the
// caller's wait.
//
// This package imports no other package of the project.
package llm
