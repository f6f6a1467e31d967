package billing

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gpufinops/gpufinops/providers"
)

// ErrSource marks a --billing value that names no source this build reads.
var ErrSource = providers.ErrBillingSource

// Load reads the --billing SOURCE: a FOCUS file or folder, file://PATH, or
// a registered cloud's warehouse table by its scheme (providers.Warehouse:
// athena://WORKGROUP/DATABASE.TABLE, bigquery://PROJECT.DATASET.TABLE),
// the aggregation pushed down to the warehouse.
func Load(ctx context.Context, source string, o Options) (*Summary, error) {
	scheme, rest, ok := strings.Cut(source, "://")
	if !ok {
		return Read(ctx, source, o)
	}
	if scheme == "file" {
		return Read(ctx, rest, o)
	}
	forms := []string{"a path", "file://PATH"}
	for _, w := range providers.Warehouses() {
		if w.Scheme == scheme {
			return ReadWarehouse(ctx, w, source, o)
		}
		forms = append(forms, w.Form)
	}
	return nil, fmt.Errorf("%w: --billing %s: unknown scheme %q (want %s)", ErrSource, source, scheme, orList(forms))
}

// orList is "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// ReadWarehouse reads source from a cloud's warehouse: AggregateSQL in the
// warehouse's dialect, run there in one query, its result folded by
// FoldAggregates. The window and version are o's (version "" is 1.2).
func ReadWarehouse(ctx context.Context, w *providers.Warehouse, source string, o Options) (*Summary, error) {
	t, err := w.Open(ctx, source)
	if err != nil {
		if errors.Is(err, ErrSource) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	defer t.Close()
	version := o.Version
	if version == "" {
		version = V12
	}
	query, err := AggregateSQL(Dialect(w.Dialect), t.Table(), version, o)
	if err != nil {
		return nil, err
	}
	header, next, err := t.Query(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return FoldAggregates(ctx, source, header, next, o)
}
