package din

import (
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lethe-research/lethe/graph"
)

// Known is what validation knows of the current session's tasks. Ids of
// other sessions must not be in it: a reference to them is an unknown id.
type Known struct {
	// Status maps the short id of every task to its status.
	Status map[string]graph.Status
	// Active is the task the answer is for: the parent of a create that
	// names none, as the apply step makes it.
	Active string
	// EvidenceRefs are the refs of the evidence lines the DIN-Read showed
	// (e1, e2, ...). A depends_on entry or a depend op naming one of them,
	// and no task, is dropped as a dependency on the root is
	// (dropEvidenceDependencies). Nil in sessions that started before it.
	EvidenceRefs map[string]bool
	// Restated: a create whose id already names a task of the session that
	// is not FAILED, in an answer whose every other op is valid, is dropped
	// (dropRestated). False in sessions that started before it.
	Restated bool
	// CorpusSources: an evidence source may also be a corpus:/// address,
	// as the DIN-Read shows a corpus passage's source. False in sessions
	// that started before it (docs/din-guards.md).
	CorpusSources bool
}

var shortIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// ShortIDPattern is the pattern a new short id must match.
const ShortIDPattern = `^[A-Za-z0-9_-]{1,32}$`

// Validate checks decoded operations against the session's tasks and the
// limits and returns every problem, in op order.
//
// Operations are checked in order, as the apply step will run them: an op
// may reference a task created earlier in the same answer, and an op that
// targets a task failed earlier in the same answer is an error just as if the
// task had been FAILED before. The rules:
//
//   - every op has a known type and only that type's fields;
//   - required fields are present; strings are not blank and within limits;
//   - new ids match ShortIDPattern and are neither existing tasks nor created
//     twice; referenced ids exist (or were created earlier in the answer);
//   - no op targets a FAILED task (FAILED is immutable and a dead end), and
//     no create hangs under or waits for one;
//   - update, fail and continue do not target a DONE task (complete may, to
//     revise the result); update and fail do not target the root goal, which
//     is the user's question and must end answered;
//   - no task is its own parent or dependency, and depends_on has no repeats;
//   - complete does not close a task under which the same answer creates
//     subtasks that it leaves open (PENDING or ACTIVE at its end): they would
//     never run, so the plan and the result contradict each other (a small
//     model otherwise plans subtasks and completes the goal in one answer,
//     from its own knowledge). Subtasks from earlier answers do not count:
//     the model may judge them unneeded, as the seeds allow;
//   - call names a known tool with the arguments it takes (web_search needs a
//     non-empty query);
//   - evidence sources are http(s) URLs;
//   - at most lim.MaxOps ops. An empty list is valid.
func Validate(ops []Op, known Known, lim Limits) []Error {
	errs := validate(ops, known, lim, nil)
	sortErrors(errs)
	return errs
}

type validator struct {
	known   Known
	lim     Limits
	created map[string]bool         // ids created earlier in this answer
	status  map[string]graph.Status // status changes made earlier in this answer
	parent  map[string]string       // parents of the tasks created in this answer
	errs    []Error
}

func validate(ops []Op, known Known, lim Limits, metas []opMeta) []Error {
	v := &validator{known: known, lim: lim.withDefaults(), created: map[string]bool{}, status: map[string]graph.Status{}, parent: map[string]string{}}
	if len(ops) > v.lim.MaxOps {
		v.add(errf(-1, "", "", CodeTooManyOps,
			"the answer has %d ops but at most %d are allowed: keep the most important ones", len(ops), v.lim.MaxOps))
	}
	for i := range ops {
		var meta opMeta
		if metas != nil {
			meta = metas[i]
		}
		if meta.skip {
			continue
		}
		v.op(i, &ops[i], meta)
	}
	v.openSubtasks(ops, metas)
	return v.errs
}

func (v *validator) add(e Error) { v.errs = append(v.errs, e) }

// exists reports whether a short id names a task of the session or one
// created earlier in this answer.
func (v *validator) exists(id string) bool {
	if v.created[id] {
		return true
	}
	_, ok := v.known.Status[id]
	return ok
}

func (v *validator) statusOf(id string) graph.Status {
	if s, ok := v.status[id]; ok {
		return s
	}
	return v.known.Status[id]
}

func (v *validator) op(i int, o *Op, meta opMeta) {
	spec, ok := specOf(o.Op)
	if !ok {
		if strings.TrimSpace(o.Op) == "" {
			v.add(errf(i, "", "op", CodeMissing, `missing "op": say which operation this is (one of %s)`, opList()))
			return
		}
		v.add(errf(i, "", "op", CodeUnknownOp, "unknown op %q: use one of %s", o.Op, opList()))
		return
	}
	present := func(name string) bool {
		if meta.decoded {
			return meta.present[name]
		}
		return isSet(o, name)
	}
	// Fields of other op types. Parse already reported them by key.
	if !meta.decoded {
		for _, name := range allFields {
			if _, mine := spec.field(name); name != "op" && !mine && isSet(o, name) {
				v.add(unknownFieldError(i, o.Op, name))
			}
		}
	}
	for _, f := range spec.fields {
		if meta.bad[f.name] {
			continue // already reported by the decoder
		}
		if !present(f.name) {
			if f.required {
				v.add(errf(i, o.Op, f.name, CodeMissing, "missing required field %q (%s)", f.name, f.doc))
			}
			continue
		}
		v.field(i, o, f, meta)
	}
	v.rules(i, o)
	v.transition(o)
}

// field checks one present field and reports whether it is fine.
func (v *validator) field(i int, o *Op, f fieldSpec, meta opMeta) bool {
	switch f.kind {
	case kText:
		return v.text(i, o.Op, f.name, str(o, f.name), v.lim.MaxStringLen)
	case kEmbed:
		return v.text(i, o.Op, f.name, str(o, f.name), v.lim.MaxEmbedTextLen)
	case kURL:
		s := str(o, f.name)
		if !v.text(i, o.Op, f.name, s, v.lim.MaxStringLen) {
			return false
		}
		switch {
		case isHTTPURL(s):
			return true
		case !v.known.CorpusSources:
			v.add(errf(i, o.Op, f.name, CodeBadSource, "%q is not an http(s) URL: give the page URL or leave source out", clip(s)))
			return false
		case isCorpusURL(s):
			return true
		}
		v.add(errf(i, o.Op, f.name, CodeBadSource, "%q is not an http(s) URL or a corpus:/// address: give the source as the evidence line shows it, or leave source out", clip(s)))
		return false
	case kNewID:
		return v.newID(i, o)
	case kRef:
		id := str(o, f.name)
		if o.Op == OpCreate && f.name == "parent" && id == o.ID && id != "" {
			v.add(errf(i, o.Op, f.name, CodeSelfReference, "a task cannot be its own parent"))
			return false
		}
		return v.ref(i, o.Op, f.name, id)
	case kRefList:
		fine := true
		seen := map[string]bool{}
		for j, id := range o.DependsOn {
			name := f.name + "[" + strconv.Itoa(j) + "]"
			switch {
			case o.Op == OpCreate && id == o.ID && id != "":
				v.add(errf(i, o.Op, name, CodeSelfReference, "a task cannot depend on itself"))
				fine = false
			case seen[id]:
				v.add(errf(i, o.Op, name, CodeDuplicateRef, "%q is listed twice in depends_on", id))
				fine = false
			default:
				if !v.ref(i, o.Op, name, id) {
					fine = false
				}
			}
			seen[id] = true
		}
		return fine
	case kTool:
		if !v.text(i, o.Op, f.name, o.Tool, v.lim.MaxStringLen) {
			return false
		}
		if o.Tool != ToolWebSearch {
			v.add(errf(i, o.Op, f.name, CodeUnknownTool, "unknown tool %q: the only tool is %s", clip(o.Tool), ToolWebSearch))
			return false
		}
		return true
	case kArgs:
		return v.args(i, o, meta)
	}
	return true
}

// text checks a free-text field that is present.
func (v *validator) text(i int, op, name, s string, limit int) bool {
	if strings.TrimSpace(s) == "" {
		v.add(errf(i, op, name, CodeEmpty, "%q is empty: write the text or leave the field out if it is optional", name))
		return false
	}
	if n := utf8.RuneCountInString(s); n > limit {
		v.add(errf(i, op, name, CodeTooLong, "%q has %d characters, at most %d are allowed: shorten it", name, n, limit))
		return false
	}
	return true
}

func (v *validator) newID(i int, o *Op) bool {
	id := o.ID
	switch {
	case strings.TrimSpace(id) == "":
		v.add(errf(i, o.Op, "id", CodeEmpty, `"id" is empty: choose a new short id such as "t7"`))
	case !shortIDPattern.MatchString(id):
		v.add(errf(i, o.Op, "id", CodeBadID, "%q is not a valid short id: use only letters, digits, _ and -, at most 32 characters", clip(id)))
	case v.created[id]:
		v.add(errf(i, o.Op, "id", CodeDuplicateID, "id %q is created twice in this answer: give each new task its own id", id))
	case v.exists(id):
		v.add(errf(i, o.Op, "id", CodeIDExists, "id %q already names an existing task: choose a new id (or use update to revise that task)", id))
	default:
		return true
	}
	return false
}

// ref checks a reference to a task.
func (v *validator) ref(i int, op, name, id string) bool {
	if strings.TrimSpace(id) == "" {
		v.add(errf(i, op, name, CodeEmpty, "%q is empty: give the short id of a task from the context", name))
		return false
	}
	if !v.exists(id) {
		msg := "unknown task id " + strconv.Quote(clip(id))
		if s := v.suggest(id); s != "" {
			msg += ": did you mean " + strconv.Quote(s) + "?"
		} else {
			msg += ": use a short id shown in the context or created earlier in this answer"
		}
		v.add(Error{Index: i, Op: op, Field: name, Code: CodeUnknownID, Msg: msg})
		return false
	}
	if v.statusOf(id) == graph.Failed {
		v.add(errf(i, op, name, CodeFailedTarget, "task %q is FAILED: failed tasks are dead ends and cannot be changed or built on", id))
		return false
	}
	return true
}

// suggest finds the id the model probably meant: the same id without the
// brackets or quotes of the DIN-Read notation, or with different case.
// Candidates are sorted so the suggestion does not depend on map order.
func (v *validator) suggest(id string) string {
	bare := strings.Trim(strings.TrimSpace(id), "[]\"'`")
	if bare != id && v.exists(bare) {
		return bare
	}
	var ids []string
	for k := range v.known.Status {
		ids = append(ids, k)
	}
	for k := range v.created {
		ids = append(ids, k)
	}
	sort.Strings(ids)
	match := ""
	for _, k := range ids {
		if strings.EqualFold(k, bare) {
			if match != "" && match != k {
				return "" // ambiguous
			}
			match = k
		}
	}
	return match
}

func (v *validator) args(i int, o *Op, meta opMeta) bool {
	if o.Tool != ToolWebSearch {
		return true // the tool error says it all
	}
	fine := true
	for _, k := range sortedKeys(o.Args) {
		if k != "query" {
			v.add(errf(i, o.Op, "args."+k, CodeUnknownArg, "%s takes only a \"query\" argument, not %q", ToolWebSearch, clip(k)))
			fine = false
		}
	}
	if meta.bad["args.query"] {
		return false
	}
	q, ok := o.Args["query"]
	if !ok || strings.TrimSpace(q) == "" {
		v.add(errf(i, o.Op, "args.query", CodeMissingQuery, `%s needs a non-empty query: "args": {"query": "..."}`, ToolWebSearch))
		return false
	}
	if n := utf8.RuneCountInString(q); n > v.lim.MaxQueryLen {
		v.add(errf(i, o.Op, "args.query", CodeTooLong, "the query has %d characters, at most %d are allowed: search for one focused question", n, v.lim.MaxQueryLen))
		return false
	}
	return fine
}

// rules are the checks that involve the target's state or two fields.
func (v *validator) rules(i int, o *Op) {
	switch o.Op {
	case OpDepend:
		if o.Task != "" && o.Task == o.On {
			v.add(errf(i, o.Op, "on", CodeSelfReference, "a task cannot depend on itself"))
		}

	case OpUpdate, OpFail, OpContinue:
		if !v.exists(o.Task) {
			return
		}
		if o.Task == graph.RootShortID && o.Op != OpContinue {
			if o.Op == OpUpdate {
				v.add(errf(i, o.Op, "task", CodeRootGoal, "the root is the user's goal and cannot be rewritten: create subtasks instead"))
			} else {
				v.add(errf(i, o.Op, "task", CodeRootGoal, "the root goal cannot be failed: complete it with what is known and say what remains open"))
			}
			return
		}
		if v.statusOf(o.Task) == graph.Done {
			switch o.Op {
			case OpUpdate:
				v.add(errf(i, o.Op, "task", CodeDoneTarget, "task %q is DONE and cannot be rewritten: use complete to revise its result or create a new task", o.Task))
			case OpFail:
				v.add(errf(i, o.Op, "task", CodeDoneTarget, "task %q is DONE and cannot be failed: use complete to revise its result", o.Task))
			case OpContinue:
				v.add(errf(i, o.Op, "task", CodeDoneTarget, "task %q is DONE and cannot be reopened: create a new task for the remaining work", o.Task))
			}
		}
	}
}

// transition records the status change an op makes, so later ops in the
// same answer see it. It applies even when the op has errors: the model's
// intent is clear, and a fixed answer will make the same change.
func (v *validator) transition(o *Op) {
	switch o.Op {
	case OpCreate:
		if shortIDPattern.MatchString(o.ID) && !v.exists(o.ID) {
			v.created[o.ID] = true
			v.status[o.ID] = graph.Pending
			v.parent[o.ID] = o.Parent
			if o.Parent == "" {
				v.parent[o.ID] = v.known.Active
			}
		}
	case OpComplete:
		if v.exists(o.Task) && v.statusOf(o.Task) != graph.Failed {
			v.status[o.Task] = graph.Done
		}
	case OpFail:
		if v.exists(o.Task) && v.statusOf(o.Task) != graph.Done && o.Task != graph.RootShortID {
			v.status[o.Task] = graph.Failed
		}
	case OpContinue:
		if v.exists(o.Task) {
			if s := v.statusOf(o.Task); s != graph.Done && s != graph.Failed {
				v.status[o.Task] = graph.Pending
			}
		}
	}
}

// openSubtasks checks, once every op has been applied in order, that no
// complete leaves open a subtask that the same answer creates under its task.
// The error sits on the complete op and names the subtasks.
func (v *validator) openSubtasks(ops []Op, metas []opMeta) {
	// In op order, not map order: the workflow validates, so the errors
	// must not depend on map iteration.
	children := map[string][]string{}
	seen := map[string]bool{}
	for i := range ops {
		if p, ok := v.parent[ops[i].ID]; ok && ops[i].Op == OpCreate && !seen[ops[i].ID] {
			seen[ops[i].ID] = true
			children[p] = append(children[p], ops[i].ID)
		}
	}
	for i := range ops {
		o := &ops[i]
		if o.Op != OpComplete || (metas != nil && metas[i].skip) || v.statusOf(o.Task) != graph.Done {
			continue
		}
		var open []string
		for _, c := range children[o.Task] {
			if s := v.statusOf(c); s == graph.Pending || s == graph.Active {
				open = append(open, c)
			}
		}
		if len(open) == 0 {
			continue
		}
		v.add(errf(i, o.Op, "task", CodeOpenSubtasks,
			"this answer creates subtasks of %q (%s) and completes %q: drop the complete and let the subtasks run (research them with %s), or drop the subtasks", o.Task, strings.Join(open, ", "), o.Task, ToolWebSearch))
	}
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" {
		return false
	}
	return u.Scheme == "http" || u.Scheme == "https"
}

// isCorpusURL reports whether s is a local corpus address as the
// research package writes them: corpus:///<path>, with no host.
func isCorpusURL(s string) bool {
	u, err := url.Parse(strings.TrimSpace(s))
	return err == nil && u.Scheme == "corpus" && u.Host == "" && strings.Trim(u.Path, "/") != ""
}

// clip shortens a value echoed in an error message: the model needs to
// recognize it, not to read it again in full.
func clip(s string) string {
	const max = 60
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + "…"
}

func opList() string {
	return strings.Join(OpTypes(), ", ")
}

func fieldList(op string) string {
	spec, ok := specOf(op)
	if !ok {
		return ""
	}
	names := []string{"op"}
	for _, f := range spec.fields {
		n := f.name
		if !f.required {
			n += " (optional)"
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}
