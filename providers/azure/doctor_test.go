package azure

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/azure/sim"
)

// TestDoctorChecksComputeResources: doctor's region check queries Resource
// Graph's ComputeResources table, where Azure lists the Uniform scale-set
// (AKS) GPU nodes (FACTS.md), and reports how many it sees; a table that
// cannot be queried is an error, a refused read a missing permission.
func TestDoctorChecksComputeResources(t *testing.T) {
	f := testFleet(t, 30)
	members := 0
	for _, in := range f.Instances {
		if in.Tags["aks-managed-poolName"] != "" && in.Region == "eastus" {
			members++
		}
	}
	scope := providers.Scope{Account: subA, Region: "eastus"}
	find := func(checks []providers.Check) *providers.Check {
		for i, c := range checks {
			if strings.Contains(c.Method, "ComputeResources") {
				return &checks[i]
			}
		}
		t.Fatalf("no ComputeResources check among %+v", checks)
		return nil
	}
	srv, _ := testSim(t, f, sim.Options{})
	c := find(testProvider(t, srv.URL, providers.Options{}).CheckPermissions(context.Background(), scope))
	if c.Status != providers.CheckOK || !strings.HasPrefix(c.Detail, fmt.Sprintf("%d Uniform", members)) {
		t.Errorf("ComputeResources check %+v, want OK with %d members", c, members)
	}
	for _, tc := range []struct {
		status int
		code   string
		want   providers.CheckStatus
	}{{http.StatusForbidden, "AuthorizationFailed", providers.CheckMissing}, {http.StatusBadRequest, "BadRequest", providers.CheckError}} {
		srv, _ := testSim(t, f, sim.Options{Fault: func(service, op, scope string) (int, string) {
			if service == "resourcegraph" {
				return tc.status, tc.code
			}
			return 0, ""
		}})
		c := find(testProvider(t, srv.URL, providers.Options{}).CheckPermissions(context.Background(), scope))
		if c.Status != tc.want {
			t.Errorf("Resource Graph answering %d: ComputeResources check %+v, want %s", tc.status, c, tc.want)
		}
	}
}
