package service

import (
	"context"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/lethe-research/lethe/workflows"
)

var attrTypes = map[string]enumspb.IndexedValueType{
	"Keyword": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"Int":     enumspb.INDEXED_VALUE_TYPE_INT,
	"Double":  enumspb.INDEXED_VALUE_TYPE_DOUBLE,
}

// EnsureSearchAttributes registers the session's search attributes on the
// namespace when they are missing. A session whose upsert names an
// unregistered attribute would fail every workflow task, so a worker that
// cannot register them (no operator permission, e.g. on Temporal Cloud)
// returns an error saying what to run or to set temporal.search_attributes
// to false.
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string) (added []string, err error) {
	have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("list search attributes of %s: %w", namespace, err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for _, a := range workflows.SearchAttributes() {
		name, typ, _ := strings.Cut(a, "=")
		if _, ok := have.GetCustomAttributes()[name]; !ok {
			missing[name] = attrTypes[typ]
			added = append(added, a)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: missing})
	if err != nil {
		return nil, fmt.Errorf("register search attributes %s on %s (run `temporal operator search-attribute create` for each, or set temporal.search_attributes=false): %w",
			strings.Join(added, ", "), namespace, err)
	}
	return added, nil
}
