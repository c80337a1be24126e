package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/lethe-research/lethe/service"
	"github.com/lethe-research/lethe/workflows"
)

// TestEnsureSearchAttributes registers the attributes on a namespace that
// has none (what a worker does at start), then finds nothing left to add.
func TestEnsureSearchAttributes(t *testing.T) {
	c := dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := fmt.Sprintf("sa-%d", time.Now().UnixNano())
	_, err := c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: ns, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	var added []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if added, err = service.EnsureSearchAttributes(ctx, c, ns); err == nil {
			break // a new namespace takes a moment to reach every service
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != len(workflows.SearchAttributes()) {
		t.Fatalf("added %v, want all of %v", added, workflows.SearchAttributes())
	}
	again, err := service.EnsureSearchAttributes(ctx, c, ns)
	if err != nil || len(again) != 0 {
		t.Fatalf("second call added %v (err %v), want nothing", again, err)
	}
}
