package billing

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrSource marks a --billing value that names no source this build reads.
var ErrSource = errors.New("bad billing source")

// Load reads the --billing SOURCE: a FOCUS file or folder, file://PATH, or
// athena://WORKGROUP/DATABASE.TABLE or bigquery://PROJECT.DATASET.TABLE
// (the aggregation pushed down to the warehouse).
func Load(ctx context.Context, source string, o Options) (*Summary, error) {
	scheme, rest, ok := strings.Cut(source, "://")
	if !ok {
		return Read(ctx, source, o)
	}
	switch scheme {
	case "file":
		return Read(ctx, rest, o)
	case "athena":
		return loadAthena(ctx, source, o)
	case "bigquery":
		return loadBigQuery(ctx, source, o)
	}
	return nil, fmt.Errorf("%w: --billing %s: unknown scheme %q (want a path, file://PATH, athena://WORKGROUP/DATABASE.TABLE or bigquery://PROJECT.DATASET.TABLE)", ErrSource, source, scheme)
}
