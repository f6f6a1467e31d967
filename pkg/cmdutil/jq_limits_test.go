package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Programs that never end, or build something without bound, stop with a
// usage error within their limit and print nothing.
func TestJQLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs programs to their limits")
	}
	for _, tc := range []struct {
		expr string
		q    JQ
		want string
	}{
		{"def f: f; f", JQ{Timeout: 300 * time.Millisecond}, "stopped after 300ms (--jq-timeout)"},
		{"def f: 1 + f; f", JQ{Timeout: 300 * time.Millisecond, MaxMemory: 64 << 20}, "stopped"},
		{"[range(1e12)]", JQ{Timeout: 2 * time.Second, MaxMemory: 16 << 20}, "stopped"},
		{`[range(1e12) | tostring * 100]`, JQ{Timeout: 5 * time.Second, MaxMemory: 32 << 20}, "more than 32 MiB of memory"},
		{"[range(1e12)]", JQ{Timeout: 200 * time.Millisecond}, "stopped"},
		{"repeat(1)", JQ{Timeout: 5 * time.Second, MaxOutput: 1 << 18}, "printed more than 0.25 MiB"},
		{"range(1e12)", JQ{Timeout: 300 * time.Millisecond}, "stopped"},
		{"last(range(1e12))", JQ{Timeout: 300 * time.Millisecond}, "stopped after 300ms"},
		{`[limit(1e9; repeat("x"))] | add`, JQ{Timeout: 2 * time.Second, MaxMemory: 64 << 20}, "stopped"},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			c, err := CompileJQ(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			c.Timeout, c.MaxOutput, c.MaxMemory = tc.q.Timeout, tc.q.MaxOutput, tc.q.MaxMemory
			var out bytes.Buffer
			start := time.Now()
			err = c.Run(context.Background(), &out, []byte(jqDoc))
			took := time.Since(start)
			var fe *FlagError
			if !errors.As(err, &fe) || ExitCodeFor(err) != ExitUsage || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a usage error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("several lines: %q", err)
			}
			if limit := tc.q.Timeout + 2*time.Second; took > limit {
				t.Errorf("took %s", took)
			}
			if out.Len() != 0 {
				t.Errorf("printed %d bytes", out.Len())
			}
		})
	}
}

func TestJQDefaultsAndCancel(t *testing.T) {
	c, err := CompileJQ("def f: f; f")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = c.Run(ctx, &bytes.Buffer{}, []byte(jqDoc))
	if err == nil || ExitCodeFor(err) == ExitUsage {
		t.Errorf("a cancelled run is not a usage error: %v", err)
	}
	for _, d := range []time.Duration{0, -time.Second, 11 * time.Minute} {
		if err := CheckJQTimeout(d); err == nil || ExitCodeFor(err) != ExitUsage {
			t.Errorf("%s: %v", d, err)
		}
	}
	if err := CheckJQTimeout(DefaultJQTimeout); err != nil {
		t.Error(err)
	}
}
