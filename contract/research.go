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
}
