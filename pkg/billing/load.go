package billing

import (
	"context"
	"fmt"
	"strings"
)

// Load reads the --billing SOURCE: a FOCUS file or folder, or file://PATH.
// Warehouse sources (athena://, bigquery://) are named so that the error
// says they are not read by this build.
func Load(ctx context.Context, source string, o Options) (*Summary, error) {
	scheme, rest, ok := strings.Cut(source, "://")
	if !ok {
		return Read(ctx, source, o)
	}
	switch scheme {
	case "file":
		return Read(ctx, rest, o)
	case "athena", "bigquery":
		return nil, fmt.Errorf("--billing %s: the %s push-down is not in this build; export the FOCUS data to files and give their folder", source, scheme)
	}
	return nil, fmt.Errorf("--billing %s: unknown scheme %q (want a path, file://PATH)", source, scheme)
}
