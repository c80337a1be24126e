package contract

// URLCandidate is a URL waiting in the research queue, with the cosine between
// the goal embedding and its title+snippet embedding (computed by Discover,
// so the workflow ranks without vectors).
type URLCandidate struct {
	URL      string
	Title    string
	Snippet  string
	GoalCos  float64
	Provider string
	// Depth is how many links were followed to reach the URL: 0 for a
	// search result, 1 for a link on a search result's page, …
	Depth int `json:",omitempty"`
	// Held: the session already holds evidence read from this URL (an
	// earlier research run fetched it); false for links, and for results
	// Discover returned before it was recorded.
	Held bool `json:",omitempty"`
}
