package recommend

import (
	"testing"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// FuzzManagedItem plans one managed item of any kind and service from
// arbitrary facts beside a VM: the money invariants (sums, no saving above
// cost or below zero, none protected) and the managed ones (a change on
// every managed advice, no VM-only advice) hold whatever the facts.
func FuzzManagedItem(f *testing.F) {
	f.Add(uint8(0), uint8(0), 2, 4, 11.0, 1.0, 0.0, -1.0, uint8(0), false, 60.0, uint8(0))
	f.Add(uint8(1), uint8(1), 1, -1, 1.0, 0.5, -1.0, -1.0, uint8(1), false, -1.0, uint8(2))
	f.Add(uint8(2), uint8(3), 2, 2, 0.0, 1.0, -1.0, 0.0, uint8(0), true, 30.0, uint8(1))
	f.Add(uint8(0), uint8(4), 2, -1, 97.0, 1.0, -1.0, -1.0, uint8(0), false, -1.0, uint8(0))
	f.Fuzz(func(t *testing.T, svc, kind uint8, replicas, minReplicas int, p95, coverage, reqs, jobs float64, tagIdx uint8, scaleToZero bool, shutdown float64, hoursAgo uint8) {
		kinds := fleet.ManagedKinds
		cl := clouds[int(svc)%len(clouds)]
		in := cl.item("x", kinds[int(kind)%len(kinds)], max(0, min(replicas, 64)))
		if p95 >= 0 && p95 <= 100 {
			gpuUtil(p95)(&in)
			if coverage >= 0 && coverage <= 1 {
				in.Utilization.Coverage = &coverage
			}
		}
		if reqs >= 0 && reqs < 1e12 {
			in.Managed.Requests = &reqs
		}
		if jobs >= 0 && jobs < 1e6 {
			in.Managed.Jobs = &jobs
		}
		if r := in.Managed.Replicas; r != nil && minReplicas >= 0 && minReplicas <= r.Current {
			r.Min = &minReplicas
		}
		if shutdown >= 0 && shutdown < 1e5 {
			in.Managed.IdleShutdownMinutes = &shutdown
		}
		in.Managed.ScaleToZero = scaleToZero
		switch tagIdx % 4 {
		case 1:
			in.Tags["Environment"] = "production"
		case 2:
			in.Tags["auto-shutdown-exempt"] = "true"
		}
		launch := managedNow.Add(-time.Duration(hoursAgo) * time.Hour)
		in.LaunchTime = &launch
		if (&fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind, Instances: []fleet.Instance{in}}).Validate() != nil {
			return
		}
		runManaged(t, Options{}, in, inst("i-vm", "g5.xlarge", withUtil(agg(busy, memHigh, hostMid, hostMid))))
	})
}
