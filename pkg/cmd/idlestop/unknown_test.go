package idlestop

import (
	"errors"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/idlestop"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/providers"
)

// A machine whose GPU count is unknown is never stopped; one of a known
// count is left as decided.
func TestSkipUnknownGPUs(t *testing.T) {
	cands := []idlestop.Candidate{
		{Instance: fleet.Instance{ID: "i-unknown", Provider: fleet.AWS, InstanceType: "g9z.4xlarge"}},
		{Instance: fleet.Instance{ID: "i-known", Provider: fleet.AWS, InstanceType: "g5.xlarge", GPU: fleet.GPU{Model: "A10G", Count: 1}}},
	}
	decisions := []idlestop.Decision{
		{Provider: fleet.AWS, ResourceID: "i-unknown", Decision: idlestop.Stop},
		{Provider: fleet.AWS, ResourceID: "i-known", Decision: idlestop.Stop},
	}
	skipUnknownGPUs(decisions, cands)
	if d := decisions[0]; d.Decision != idlestop.Skip || d.Reason != ReasonUnknownType || d.Message == "" {
		t.Errorf("unknown GPUs: %+v", d)
	}
	if d := decisions[1]; d.Decision != idlestop.Stop {
		t.Errorf("known GPUs: %+v", d)
	}
}

// The fleet's own hourlyPrice prices a machine the catalog has no offer for.
func TestCandidateOwnPrice(t *testing.T) {
	p := decimal.RequireFromString("1.75")
	c := candidate(fleet.Instance{ID: "i-1", Provider: fleet.AWS, Region: "us-east-1", InstanceType: "g9z.4xlarge", HourlyPrice: &p}, pricing.WithTypes(nil, nil))
	if c.Hourly == nil || !c.Hourly.Hourly.Equal(p) {
		t.Errorf("hourly %+v, want %s", c.Hourly, p)
	}
}

// A powered-off VM still allocated is deallocated on its power state: a
// failed metrics source or an unknown GPU count does not hold it back, while
// an idle stop in the same scope is skipped.
func TestStoppedAllocatedNeedsNoMetrics(t *testing.T) {
	decisions := []idlestop.Decision{
		{Provider: fleet.Azure, ResourceID: "vm-parked", Decision: idlestop.Stop, Reason: idlestop.ReasonStoppedAllocated},
		{Provider: fleet.Azure, ResourceID: "vm-idle", Decision: idlestop.Stop, Reason: idlestop.ReasonIdle},
	}
	failed := map[string]*providers.ScopeError{
		"vm-parked": {Metrics: true, Source: "azure-monitor", Err: errors.New("denied")},
		"vm-idle":   {Metrics: true, Source: "azure-monitor", Err: errors.New("denied")},
	}
	skipMetricsFailed(decisions, failed)
	skipUnknownGPUs(decisions, []idlestop.Candidate{{Instance: fleet.Instance{ID: "vm-parked", Provider: fleet.Azure, InstanceType: "Standard_NX1"}}})
	if d := decisions[0]; d.Decision != idlestop.Stop || d.Reason != idlestop.ReasonStoppedAllocated {
		t.Errorf("stopped-allocated: %+v", d)
	}
	if d := decisions[1]; d.Decision != idlestop.Skip || d.Reason != ReasonMetricsFailed {
		t.Errorf("idle with failed metrics: %+v", d)
	}
}
