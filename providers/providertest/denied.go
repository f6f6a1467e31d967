package providertest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/providers"
)

// CollectDenied scans p (prices skipped) where some commitment API is
// denied: the scan must go on, keep wantInstances instances, and report
// each failure as a commitments failure that says the permission is
// missing. It returns the failed APIs ("region source", sorted) and the
// commitments kept ("region kind", in fleet order) for the caller to
// compare with the cloud's.
func CollectDenied(t *testing.T, p providers.Provider, wantInstances int) (failed, kept []string) {
	t.Helper()
	res, err := providers.Collect(context.Background(), p, providers.CollectOptions{SkipPrices: true})
	if err != nil {
		t.Fatalf("a denied commitment API aborted the scan: %v", err)
	}
	if len(res.Fleet.Instances) != wantInstances {
		t.Errorf("%d instances, want %d", len(res.Fleet.Instances), wantInstances)
	}
	for _, fl := range res.Failures {
		if !fl.Commitments {
			t.Errorf("failure %v is not a commitments failure", fl)
			continue
		}
		if !strings.Contains(fl.Error(), "permission denied") {
			t.Errorf("failure %q does not say the permission is missing", fl.Error())
		}
		failed = append(failed, fl.Scope.Region+" "+fl.Source)
	}
	slices.Sort(failed)
	for _, h := range res.Fleet.Commitments {
		kept = append(kept, h.Scope.Region+" "+h.Kind)
	}
	return failed, kept
}
