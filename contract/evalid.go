package contract

import (
	"fmt"
	"regexp"
	"strings"
)

// evalIDPattern is the charset of an evaluation id: the id names the
// evaluation's directory under eval.out_dir, so it may hold no path
// separator and must not start with a dot.
var evalIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$`)

// CheckEvalID refuses an evaluation id (its workflow id) that is not a
// single safe path component: a separator or ".." would put the outputs
// outside eval.out_dir.
func CheckEvalID(id string) error {
	if !evalIDPattern.MatchString(id) || strings.Contains(id, "..") {
		return fmt.Errorf("evaluation id %q: want 1-200 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit, without \"..\" (it names the output directory)", id)
	}
	return nil
}
