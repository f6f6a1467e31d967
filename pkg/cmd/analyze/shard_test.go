package analyze

import (
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
)

// TestBadShard: --shard needs I/N in range and a live scan; the error names
// it (a bad value is a flag parse error, which the root makes exit 2).
func TestBadShard(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--demo", "--shard", "1/2"}, "--shard 1/2 slices a live scan's scopes: add --provider"},
		{[]string{"--provider", "aws", "--shard", "3/2"}, `"--shard" flag: "3/2": I must be between 1 and 2`},
		{[]string{"--provider", "aws", "--shard", "x"}, `"--shard" flag: "x" is not I/N`},
	} {
		out, err, _ := runAnalyze(t, nil, false, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || out != "" {
			t.Errorf("%q: %v, out %q; want %q", tc.args, err, out, tc.want)
		}
	}
	if _, _, code := runAnalyze(t, nil, false, "--demo", "--shard", "1/2"); code != cmdutil.ExitUsage {
		t.Errorf("--shard without --provider: exit %d", code)
	}
}
