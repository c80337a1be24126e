package activities

// TranscribeInput transcribes the media of one staged page: Page is the
// index of the page in the Fetch batch Key (FetchResult.Pages order).
type TranscribeInput struct {
	SessionID string `json:"session_id"`
	Key       string `json:"key"`
	Page      int    `json:"page"`
	URL       string `json:"url,omitempty"` // the page's URL, for logs and the history
}

// TranscribeResult counts what happened to the page's media. Failures are
// counted, never returned: a page whose audio cannot be transcribed still
// has its text.
type TranscribeResult struct {
	Media       int `json:"media"`
	Transcribed int `json:"transcribed"`
	Failed      int `json:"failed,omitempty"`
	Skipped     int `json:"skipped,omitempty"` // no STT configured on the worker, or over max_media_per_page
	Chars       int `json:"chars"`
}
