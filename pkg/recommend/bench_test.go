package recommend

import (
	"fmt"
	"testing"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// BenchmarkRun plans a 10,000-instance fleet mixing every rule.
func BenchmarkRun(b *testing.B) {
	f := benchFleet()
	cat := testCatalog()
	p := DefaultPolicy().WithPurchases(purchasetest.Purchases())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Run(f, cat, p)
	}
}

// BenchmarkRunCommitted is BenchmarkRun's fleet holding 40 RIs (exact and
// size-flexible), Savings Plans and a capacity reservation over it.
func BenchmarkRunCommitted(b *testing.B) {
	f := benchFleet()
	for i := range 40 {
		h := ri(fmt.Sprintf("ri-%02d", i), []string{"p4d.24xlarge", "g5.2xlarge", "g4dn.xlarge", "g5.xlarge"}[i%4], float64(20+i), "0.9", i%2 == 0)
		switch i % 10 {
		case 7:
			h = fleet.Held{ID: h.ID, Provider: fleet.AWS, Kind: fleet.HeldComputeSavingsPlan, Term: "1y", HourlyCommitment: heldDec("150")}
		case 9:
			h = fleet.Held{ID: h.ID, Provider: fleet.AWS, Kind: fleet.HeldCapacityReservation, Scope: fleet.HeldScope{Region: "us-east-1"}, InstanceType: "g5.2xlarge", Count: 50}
		}
		f.Commitments = append(f.Commitments, h)
	}
	cat := testCatalog()
	p := DefaultPolicy().WithPurchases(purchasetest.Purchases())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Run(f, cat, p)
	}
}

func benchFleet() *fleet.Fleet {
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
	return &fleet.Fleet{Instances: instances}
}
