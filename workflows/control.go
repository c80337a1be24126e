package workflows

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/workflow"

	"github.com/lethe-research/lethe/contract"
)

// The update and query payloads live in contract.
type (
	ExtendRequest = contract.ExtendRequest
	ExtendResult  = contract.ExtendResult
	GuideRequest  = contract.GuideRequest
	TreeNode      = contract.TreeNode
)

// registerControl installs the query, signal and update handlers. Updates
// are validated before they are accepted, so a bad value is rejected with a
// clear error and never reaches history.
func (s *session) registerControl(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryProgress, s.progress); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, QueryTree, s.tree); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, QueryState, func() (SessionState, error) { return *s.st, nil }); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, QueryReport, func() (string, error) { return s.report, nil }); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateExtend, s.extend,
		workflow.UpdateHandlerOptions{Validator: s.validateExtend}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateGuide, s.guide,
		workflow.UpdateHandlerOptions{Validator: s.validateGuide})
}

func (s *session) validateExtend(_ workflow.Context, r ExtendRequest) error {
	if s.phase != "iterating" && s.phase != "configuring" && s.phase != "bootstrap" {
		return fmt.Errorf("extend rejected: the session is %s, the loop has ended", s.phase)
	}
	if r.Iterations < 0 || r.Iterations > s.cfg.Control.MaxExtendIterations {
		return fmt.Errorf("extend rejected: iterations = %d, want 0..%d (control.max_extend_iterations)", r.Iterations, s.cfg.Control.MaxExtendIterations)
	}
	d, err := parseWall(r.WallClock)
	if err != nil {
		return fmt.Errorf("extend rejected: wall_clock %q: %w", r.WallClock, err)
	}
	if d < 0 || d > s.cfg.Control.MaxExtendWallClock {
		return fmt.Errorf("extend rejected: wall_clock = %s, want 0..%s (control.max_extend_wall_clock)", d, s.cfg.Control.MaxExtendWallClock)
	}
	if r.Iterations == 0 && d == 0 {
		return fmt.Errorf("extend rejected: give iterations and/or wall_clock")
	}
	return nil
}

func parseWall(s string) (time.Duration, error) {
	if strings.TrimSpace(s) == "" {
		return 0, nil
	}
	return time.ParseDuration(s)
}

func (s *session) extend(_ workflow.Context, r ExtendRequest) (ExtendResult, error) {
	d, _ := parseWall(r.WallClock) // validated
	s.st.ExtraIterations += r.Iterations
	s.st.ExtraWallClock += d
	s.log.Info("budget extended", "iterations", r.Iterations, "wall_clock", d)
	return ExtendResult{
		MaxIterations: s.st.MaxIterations(s.cfg.Budget.MaxIterations),
		MaxWallClock:  s.st.MaxWallClock(s.cfg.Budget.MaxWallClock).String(),
	}, nil
}

func (s *session) validateGuide(_ workflow.Context, r GuideRequest) error {
	n := utf8.RuneCountInString(strings.TrimSpace(r.Note))
	switch {
	case n == 0:
		return fmt.Errorf("guide rejected: the note is empty")
	case n > s.cfg.Control.MaxGuideChars:
		return fmt.Errorf("guide rejected: the note has %d characters, more than control.max_guide_chars = %d", n, s.cfg.Control.MaxGuideChars)
	case s.phase != "iterating" && s.phase != "configuring" && s.phase != "bootstrap":
		return fmt.Errorf("guide rejected: the session is %s, the loop has ended", s.phase)
	}
	return nil
}

func (s *session) guide(_ workflow.Context, r GuideRequest) (int, error) {
	s.st.Guides = append(s.st.Guides, strings.TrimSpace(r.Note))
	if over := len(s.st.Guides) - s.cfg.Control.MaxGuides; over > 0 {
		s.st.Guides = s.st.Guides[over:]
	}
	return len(s.st.Guides), nil
}

// tree is the task tree as of the last ReadState, rooted at the root task.
func (s *session) tree() (TreeNode, error) {
	return buildTree(s.st.Tasks), nil
}

func buildTree(tasks []contract.TaskInfo) TreeNode {
	children := map[string][]contract.TaskInfo{}
	var root *contract.TaskInfo
	for i, t := range tasks {
		if t.Parent == "" {
			root = &tasks[i]
			continue
		}
		children[t.Parent] = append(children[t.Parent], t)
	}
	if root == nil {
		return TreeNode{}
	}
	var build func(t contract.TaskInfo, depth int) TreeNode
	build = func(t contract.TaskInfo, depth int) TreeNode {
		n := TreeNode{ID: t.ShortID, Status: string(t.Status), Description: t.Description, Evidence: t.Evidence, Result: t.Result}
		if depth < 64 { // the graph is acyclic; the bound only guards a corrupt read
			for _, c := range children[t.ShortID] {
				n.Children = append(n.Children, build(c, depth+1))
			}
		}
		return n
	}
	return build(*root, 0)
}
