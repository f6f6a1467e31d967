package coverage

import (
	"fmt"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// benchFleet is 10,000 instances on three clouds, a fifth on a weekday
// schedule and a fifth running part of the month, under 60 commitments of
// every kind.
func benchFleet() *fleet.Fleet {
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	office := &fleet.Schedule{Timezone: "Europe/Berlin", Windows: []fleet.Window{{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "08:00", End: "19:00"}}}
	for i := range 10000 {
		t := fuzzTypes[i%len(fuzzTypes)]
		in := fleet.Instance{ID: fmt.Sprintf("i-%05d", i), Provider: t.p, Region: t.region, InstanceType: t.typ,
			Lifecycle: fleet.OnDemand, State: fleet.Running, Account: fmt.Sprintf("a%d", i%3)}
		switch i % 5 {
		case 1:
			in.Usage.Schedule = office
		case 2:
			h := float64(100 + i%600)
			in.Usage.HoursPerMonth = &h
		}
		p95 := float64(i % 97)
		in.Utilization = &fleet.Utilization{GPU: &fleet.Stats{Avg: p95 / 2, P95: p95, Max: p95}}
		f.Instances = append(f.Instances, in)
	}
	rate := func(s string) *decimal.Decimal { d := decimal.RequireFromString(s); return &d }
	for i := range 60 {
		id := fmt.Sprintf("c%02d", i)
		var h fleet.Held
		switch i % 6 {
		case 0:
			h = fleet.Held{ID: id, Provider: fleet.AWS, Kind: fleet.HeldStandardRI, Term: "1y", Scope: fleet.HeldScope{Level: "region", Region: "us-east-1"},
				InstanceType: "g5.12xlarge", Count: 40, SizeFlexible: true, HourlyRate: rate("3.5")}
		case 1:
			h = fleet.Held{ID: id, Provider: fleet.AWS, Kind: fleet.HeldComputeSavingsPlan, Term: "1y", HourlyCommitment: rate("200")}
		case 2:
			h = fleet.Held{ID: id, Provider: fleet.AWS, Kind: fleet.HeldStandardRI, Term: "1y", Scope: fleet.HeldScope{Level: "region", Region: "us-east-1"},
				InstanceType: "p5.48xlarge", Count: 20, HourlyRate: rate("30")}
		case 3:
			h = fleet.Held{ID: id, Provider: fleet.Azure, Kind: fleet.HeldReservation, Term: "1y", Scope: fleet.HeldScope{Level: "shared", Region: "eastus"},
				InstanceType: "Standard_NC24ads_A100_v4", Count: 60, SizeFlexible: true, HourlyRate: rate("2.2")}
		case 4:
			h = fleet.Held{ID: id, Provider: fleet.GCP, Kind: fleet.HeldResourceCUD, Term: "1y", Scope: fleet.HeldScope{Region: "europe-west4"}, InstanceFamily: "g2",
				Resources: []fleet.HeldResource{{Type: "vcpu", Amount: 2000}, {Type: "memory", Amount: 8000}, {Type: "gpu", GPUModel: "L4", Amount: 150}}, HourlyCommitment: rate("100")}
		default:
			h = fleet.Held{ID: id, Provider: fleet.AWS, Kind: fleet.HeldCapacityReservation, Scope: fleet.HeldScope{Region: "us-east-1"},
				InstanceType: "g5.xlarge", Count: 30}
		}
		f.Commitments = append(f.Commitments, h)
	}
	return f
}

// BenchmarkAllocate allocates benchFleet's commitments.
func BenchmarkAllocate(b *testing.B) {
	f := benchFleet()
	cat := testCatalog()
	b.ReportAllocs()
	for b.Loop() {
		Allocate(Input{Fleet: f, Catalog: cat, Now: now})
	}
}
