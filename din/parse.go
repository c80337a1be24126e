package din

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/lethe-research/lethe/graph"
)

// Parse turns a model answer into validated operations.
//
// It extracts the JSON object (see Extract), decodes it strictly and
// validates the result (see Validate). A valid answer's dependencies on the
// root goal are dropped (see dropRootDependencies). Strict means: the top level holds
// exactly one key, "ops", holding an array; every element is an object whose
// "op" is one of the eight types and whose keys are exactly fields of that
// type, matched case-sensitively (encoding/json alone would accept "Task"
// for "task" and silently drop fields of other op types); every field has
// its JSON type. A null value counts as absent, and so does a blank optional
// string ("parent": "", "source": "").
//
// Every problem found is returned, not just the first, so one repair call
// can fix them all. Parse is all-or-nothing: when any error is returned the
// ops are nil, because applying half an answer would leave the graph in a
// state the model did not intend. An answer with an empty "ops" array is
// valid and means "nothing to do".
func Parse(text string, known Known, lim Limits) ([]Op, []Error) {
	ops, errs, _ := ParseCounted(text, known, lim)
	return ops, errs
}

// ParseCounted is Parse that also returns how many creates of existing
// tasks it dropped (dropRestated), so a session can count them: the
// guard is silent in the answer it returns.
func ParseCounted(text string, known Known, lim Limits) ([]Op, []Error, int) {
	obj, err := Extract(text)
	if err != nil {
		code := CodeNoJSON
		var xe *ExtractError
		if errors.As(err, &xe) {
			code = xe.Code
		}
		return nil, []Error{{Index: -1, Code: code, Msg: err.Error() + `; answer with one JSON object {"ops":[...]}`}}, 0
	}

	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(obj), &top); err != nil {
		return nil, []Error{{Index: -1, Code: CodeBadJSON, Msg: "the answer is not a JSON object: " + err.Error()}}, 0
	}
	var errs []Error
	keys := sortedKeys(top)
	for _, k := range keys {
		if k != "ops" {
			errs = append(errs, errf(-1, "", "", CodeTopField,
				"unexpected top-level key %q: the object must contain only \"ops\"", k))
		}
	}
	rawOps, ok := top["ops"]
	if !ok {
		errs = append(errs, errf(-1, "", "", CodeNoOps, `the JSON object has no "ops" key: wrap the operations as {"ops":[...]}`))
		return nil, errs, 0
	}
	var raws []json.RawMessage
	if isNull(rawOps) || json.Unmarshal(rawOps, &raws) != nil {
		errs = append(errs, errf(-1, "", "", CodeOpsNotArray, `"ops" must be an array of operation objects (use [] when there is nothing to do)`))
		return nil, errs, 0
	}

	ops := make([]Op, len(raws))
	metas := make([]opMeta, len(raws))
	for i, raw := range raws {
		var derrs []Error
		ops[i], metas[i], derrs = decodeOp(i, raw)
		errs = append(errs, derrs...)
	}
	ops = dropEvidenceDependencies(ops, known)
	errs = append(errs, validate(ops, known, lim, metas)...)
	dropped := 0
	if known.Restated {
		n := len(ops)
		ops, errs = dropRestated(ops, errs, known)
		dropped = n - len(ops)
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs, 0
	}
	return dropRootDependencies(ops), nil, dropped
}

// dropRootDependencies removes every dependency of a task on the root goal:
// depends_on entries and depend ops. Such a task would never be ready (the
// root is completed last, and that ends the research), so the dependency
// can only be a mistake; small models make it often ("this belongs to the
// goal"), and rejecting the answer would also throw away the searches in
// it. Like a null field, it is read as absent.
func dropRootDependencies(ops []Op) []Op {
	out := ops[:0]
	for _, o := range ops {
		if o.Op == OpDepend && o.On == graph.RootShortID && o.Task != graph.RootShortID {
			continue
		}
		if o.Op == OpCreate && slices.Contains(o.DependsOn, graph.RootShortID) {
			o.DependsOn = slices.DeleteFunc(slices.Clone(o.DependsOn), func(d string) bool { return d == graph.RootShortID })
		}
		out = append(out, o)
	}
	return out
}

// dropEvidenceDependencies removes from the depends_on of create ops the
// entries that name an evidence line of the read (known.EvidenceRefs) and
// no task, known or created earlier in the answer. A task waits for
// tasks, never for evidence: a small model writes "depends_on":["e1","e3"]
// for "based on evidence e1 and e3" (in every iteration of a real-model
// session, docs/din-evidence-deps.md), and rejecting the answer threw
// away the subtasks in it. Like a dependency on the root, it is read as absent. A depend op
// naming one is left to validation, so that error indexes keep counting
// the answer's ops.
func dropEvidenceDependencies(ops []Op, known Known) []Op {
	if len(known.EvidenceRefs) == 0 {
		return ops
	}
	created := map[string]bool{}
	evidence := func(id string) bool {
		_, task := known.Status[id]
		return known.EvidenceRefs[id] && !task && !created[id]
	}
	for i, o := range ops {
		if o.Op != OpCreate {
			continue
		}
		if slices.ContainsFunc(o.DependsOn, evidence) {
			ops[i].DependsOn = slices.DeleteFunc(slices.Clone(o.DependsOn), evidence)
		}
		created[o.ID] = true
	}
	return ops
}

// opMeta carries what the decoder knows and Validate cannot: which keys were
// present (so "" is reported as empty, not as missing) and which fields were
// already rejected (so they are not reported twice).
type opMeta struct {
	decoded bool            // true when the op came from decodeOp
	skip    bool            // the op could not be decoded at all
	present map[string]bool // keys present with a non-null value
	bad     map[string]bool // keys already reported by the decoder
}

// decodeOp decodes one element of "ops" strictly. It keeps going past a bad
// field so that one repair prompt can list every problem; only an element
// whose operation type cannot be read is skipped, because without the type
// its fields cannot be checked.
func decodeOp(i int, raw json.RawMessage) (Op, opMeta, []Error) {
	var op Op
	meta := opMeta{decoded: true, present: map[string]bool{}, bad: map[string]bool{}}
	m, herr := decodeOpType(i, raw, &op)
	if herr != nil {
		meta.skip = true
		return op, meta, []Error{*herr}
	}
	spec, ok := specOf(op.Op)
	if !ok {
		// Validate reports the unknown type; its fields mean nothing.
		return op, meta, nil
	}
	var errs []Error
	for _, k := range sortedKeys(m) {
		if k == "op" {
			continue
		}
		errs = append(errs, decodeField(i, &op, &meta, spec, k, m[k])...)
	}
	return op, meta, errs
}

// decodeOpType reads the element as an object and its "op" string into
// op.Op. The messages name the accepted operations because a model that got
// the shape wrong usually needs the whole list to repair it.
func decodeOpType(i int, raw json.RawMessage, op *Op) (map[string]json.RawMessage, *Error) {
	var m map[string]json.RawMessage
	if isNull(raw) || json.Unmarshal(raw, &m) != nil {
		e := errf(i, "", "", CodeNotObject, `each element of "ops" must be an object like {"op":"create", ...}`)
		return nil, &e
	}
	rawType, ok := m["op"]
	if !ok || isNull(rawType) {
		e := errf(i, "", "op", CodeMissing, `missing "op": say which operation this is (one of %s)`, opList())
		return nil, &e
	}
	if json.Unmarshal(rawType, &op.Op) != nil {
		e := errf(i, "", "op", CodeType, `"op" must be a string (one of %s)`, opList())
		return nil, &e
	}
	return m, nil
}

// decodeField decodes one key of a known op type. Keys the decoder rejects
// are marked bad so that Validate does not report them a second time as
// missing or empty; null counts as absent, as the Parse contract says.
func decodeField(i int, op *Op, meta *opMeta, spec opSpec, k string, v json.RawMessage) []Error {
	fs, ok := spec.field(k)
	if !ok {
		meta.bad[k] = true
		return []Error{unknownFieldError(i, op.Op, k)}
	}
	if isNull(v) {
		return nil
	}
	meta.present[k] = true
	switch fs.kind {
	case kRefList:
		var list []string
		if json.Unmarshal(v, &list) != nil {
			meta.bad[k] = true
			return []Error{errf(i, op.Op, k, CodeType, "must be an array of short ids (strings)")}
		}
		op.DependsOn = list
	case kArgs:
		return decodeArgs(i, op, meta, k, v)
	default:
		var s string
		if json.Unmarshal(v, &s) != nil {
			meta.bad[k] = true
			return []Error{errf(i, op.Op, k, CodeType, "must be a string")}
		}
		if !fs.required && strings.TrimSpace(s) == "" {
			// "source": "" or "parent": "" is how models say "none";
			// rejecting it would cost a repair call for nothing.
			delete(meta.present, k)
			return nil
		}
		setStr(op, k, s)
	}
	return nil
}

// decodeArgs decodes a call's arguments, reporting each non-string value
// under its own "args.<key>" path so the repair names the exact argument;
// the well-formed arguments are kept either way.
func decodeArgs(i int, op *Op, meta *opMeta, k string, v json.RawMessage) []Error {
	var am map[string]json.RawMessage
	if json.Unmarshal(v, &am) != nil {
		meta.bad[k] = true
		return []Error{errf(i, op.Op, k, CodeType, `must be an object, e.g. {"query": "..."}`)}
	}
	var errs []Error
	args := make(map[string]string, len(am))
	for _, ak := range sortedKeys(am) {
		var s string
		if isNull(am[ak]) || json.Unmarshal(am[ak], &s) != nil {
			meta.bad["args."+ak] = true
			errs = append(errs, errf(i, op.Op, "args."+ak, CodeType, "must be a string"))
			continue
		}
		args[ak] = s
	}
	op.Args = args
	return errs
}

func unknownFieldError(i int, op, field string) Error {
	if isField(field) {
		return errf(i, op, field, CodeUnknownField, "%q is not a field of a %s op (a %s op has: %s)", field, op, op, fieldList(op))
	}
	return errf(i, op, field, CodeUnknownField, "unknown field %q (a %s op has: %s)", field, op, fieldList(op))
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sortErrors orders errors by op index (whole-answer errors first), keeping
// the order within one op, so the repair prompt reads top to bottom.
func sortErrors(errs []Error) {
	sort.SliceStable(errs, func(a, b int) bool { return errs[a].Index < errs[b].Index })
}
