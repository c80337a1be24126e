package activities_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/lethe-research/lethe/activities"
	"github.com/lethe-research/lethe/contract"
)

// activityMethods are the methods of t that the worker registers as
// activities (service.RegisterActivities, SkipInvalidStructFunctions): the
// SDK takes an exported method whose last result is an error and that has
// at most two results; anything else (CloseResearch) it skips.
func activityMethods(t reflect.Type) map[string]reflect.Type {
	errType := reflect.TypeOf((*error)(nil)).Elem()
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumMethod(); i++ {
		m := t.Method(i)
		ft := m.Type
		if n := ft.NumOut(); n == 0 || n > 2 || ft.Out(n-1) != errType {
			continue
		}
		out[m.Name] = ft
	}
	return out
}

// Workflow code names activities through contract.Activities (a nil
// pointer's method values), the worker registers *activities.Activities:
// the two must agree on every name and signature, or a session would
// schedule an activity no worker has, or decode a result into the wrong
// type. Receivers differ; everything after them must be identical.
func TestContractStubsMatchActivities(t *testing.T) {
	real := activityMethods(reflect.TypeOf(&activities.Activities{}))
	stubs := activityMethods(reflect.TypeOf(&contract.Activities{}))
	if len(real) == 0 || len(real) != len(stubs) {
		t.Errorf("%d activities, %d stubs", len(real), len(stubs))
	}
	if _, ok := real["CloseResearch"]; ok {
		t.Error("CloseResearch is not an activity, but the filter took it")
	}
	for name, rt := range real {
		st, ok := stubs[name]
		if !ok {
			t.Errorf("activity %s has no stub in contract.Activities", name)
			continue
		}
		if got, want := signature(st), signature(rt); got != want {
			t.Errorf("%s: stub %s, activity %s", name, got, want)
		}
	}
	for name := range stubs {
		if _, ok := real[name]; !ok {
			t.Errorf("stub %s names no activity of *activities.Activities", name)
		}
	}
}

// signature is a method type without its receiver.
func signature(ft reflect.Type) string {
	in := make([]reflect.Type, 0, ft.NumIn()-1)
	for i := 1; i < ft.NumIn(); i++ {
		in = append(in, ft.In(i))
	}
	out := make([]reflect.Type, ft.NumOut())
	for i := range out {
		out[i] = ft.Out(i)
	}
	return reflect.FuncOf(in, out, ft.IsVariadic()).String()
}

// A stub that ran by mistake (a worker registering contract.Activities)
// fails loudly instead of answering with a zero result.
func TestContractStubsFail(t *testing.T) {
	var acts *contract.Activities
	if _, err := acts.ReadState(context.Background(), contract.ReadStateInput{}); err == nil {
		t.Fatal("a stub answered without an error")
	}
	if _, err := acts.HealthCheck(context.Background(), contract.HealthInput{}); err == nil {
		t.Fatal("a stub answered without an error")
	}
}
