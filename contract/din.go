package contract

// Op is one DIN-Write operation as the model wrote it. Which fields an
// operation may carry is fixed by its type (see opSpecs); every other field
// must stay empty. Parse rejects an answer whose ops carry foreign fields, so
// a validated Op never holds data that the apply step would silently drop.
type Op struct {
	Op          string            `json:"op"`
	ID          string            `json:"id,omitempty"`
	Task        string            `json:"task,omitempty"`
	Description string            `json:"description,omitempty"`
	EmbedText   string            `json:"embed_text,omitempty"`
	Parent      string            `json:"parent,omitempty"`
	DependsOn   []string          `json:"depends_on,omitempty"`
	On          string            `json:"on,omitempty"`
	Result      string            `json:"result,omitempty"`
	Reason      string            `json:"reason,omitempty"`
	Content     string            `json:"content,omitempty"`
	Source      string            `json:"source,omitempty"`
	Tool        string            `json:"tool,omitempty"`
	Args        map[string]string `json:"args,omitempty"`
}
