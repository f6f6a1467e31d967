package gcp

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/providers/gcp/sim"
)

// TestListCallsHonourTheirContext: the SDK sends its REST list requests
// without the call's context; every list call of the adapter still ends at
// its deadline, not when the slow server answers, and the header that
// carries the context to the transport never reaches the server.
func TestListCallsHonourTheirContext(t *testing.T) {
	f := testFleet(t)
	opts := simOptions(t, f)
	opts.Latency = 3 * time.Second
	var leaked atomic.Int32
	s := sim.New(f, opts)
	url := startSim(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k := range r.Header {
			if http.CanonicalHeaderKey(k) == http.CanonicalHeaderKey(callHeader) {
				leaked.Add(1)
			}
		}
		s.ServeHTTP(w, r)
	}))
	p := newProvider(t, url, []string{"us-central1"})
	calls := map[string]func(ctx context.Context) error{
		"instances.aggregatedList": func(ctx context.Context) error { _, _, err := p.aggregatedList(ctx, testProject, ""); return err },
		"regions.list":             func(ctx context.Context) error { _, err := p.listRegions(ctx, testProject); return err },
		"services.skus.list":       func(ctx context.Context) error { _, err := p.skuList(ctx); return err },
		"machineTypes.aggregatedList": func(ctx context.Context) error {
			_, err := p.machineTypeAnywhere(ctx, testProject, "n1-standard-8")
			return err
		},
		"projects.search": func(ctx context.Context) error { _, err := p.searchProjects(ctx, p.restOptions()); return err },
	}
	for name, call := range calls {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		start := time.Now()
		err := call(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v, want context.DeadlineExceeded", name, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: the 100 ms deadline ended the call after %s", name, d)
		}
	}
	// and the header stays out of a call that completes
	if _, err := p.listRegions(context.Background(), testProject); err != nil {
		t.Fatal(err)
	}
	if n := leaked.Load(); n > 0 {
		t.Errorf("%d requests reached the server with the %s header", n, callHeader)
	}
}
