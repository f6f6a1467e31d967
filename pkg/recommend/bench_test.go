package recommend

import (
	"fmt"
	"testing"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// BenchmarkRun plans a 10,000-instance fleet mixing every rule.
func BenchmarkRun(b *testing.B) {
	var instances []fleet.Instance
	nb := notebook(weekdays, 9, 17)
	for i := 0; i < 10000; i++ {
		id := fmt.Sprintf("i-%05d", i)
		switch i % 5 {
		case 0:
			instances = append(instances, inst(id, "p4d.24xlarge", perWeek(60), withUtil(agg(busy, memHigh, hostMid, hostMid)), withWorkload(fleet.Training, yes())))
		case 1:
			instances = append(instances, inst(id, "g5.2xlarge", withUtil(agg(fleet.Stats{Avg: 35, P95: 46, Max: 71}, memHigh, hostLow, hostLow))))
		case 2:
			instances = append(instances, inst(id, "g4dn.xlarge", withUtil(&fleet.Utilization{Samples: nb})))
		case 3:
			instances = append(instances, inst(id, "g4dn.xlarge", withUtil(agg(idle, idle, idle, idle))))
		default:
			instances = append(instances, inst(id, "g5.2xlarge", withUtil(agg(fleet.Stats{Avg: 10, P95: 20, Max: 40}, fleet.Stats{Avg: 20, P95: 30, Max: 35}, hostLow, hostLow))))
		}
	}
	f := &fleet.Fleet{Instances: instances}
	cat := testCatalog()
	p := DefaultPolicy().WithPurchases(purchasetest.Purchases())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Run(f, cat, p)
	}
}
