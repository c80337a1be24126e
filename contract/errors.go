package contract

import "time"

// Error types the guard gives the failures it classifies.
const (
	// ErrModelUnavailable is a model-server outage. Retry policies list it
	// as non-retryable so that the server does not retry it blindly: the
	// workflow waits it out itself, shows that it waits, and keeps the wait
	// off the session's budget.
	ErrModelUnavailable = "ModelUnavailable"
	// ErrPayloadTooLarge is an activity result over temporal.max_payload_bytes.
	ErrPayloadTooLarge = "PayloadTooLarge"
	// ErrPermanentStore is a store error that retrying cannot fix.
	ErrPermanentStore = "PermanentStoreError"
	// ErrModelKeyRefused is a model server's 401 or 403: the worker's key
	// is missing or wrong, which no retry, wait or later iteration cures.
	// A session that meets it fails, naming the key's setting.
	ErrModelKeyRefused = "ModelKeyRefused"
)

// Outage is the detail of an ErrModelUnavailable failure.
type Outage struct {
	Service string `json:"service"` // llm.ServiceChat or llm.ServiceEmbed
	URL     string `json:"url"`
	Error   string `json:"error"`
	// RetryAfter is the wait the server asked for (a 429's Retry-After):
	// the workflow's next try comes no sooner. 0 = not said.
	RetryAfter time.Duration `json:"retry_after,omitempty"`
}
