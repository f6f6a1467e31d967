package coverage

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

// bytesSource draws small numbers from fuzz input, zero once it runs out.
type bytesSource struct {
	b []byte
	i int
}

func (s *bytesSource) next(n int) int {
	if s.i >= len(s.b) || n <= 0 {
		return 0
	}
	v := int(s.b[s.i]) % n
	s.i++
	return v
}

var fuzzTypes = []struct {
	p          fleet.Provider
	region     string
	typ, zoneA string
}{
	{fleet.AWS, "us-east-1", "g5.xlarge", "us-east-1a"},
	{fleet.AWS, "us-east-1", "g5.12xlarge", "us-east-1b"},
	{fleet.AWS, "us-east-1", "g5.24xlarge", "us-east-1a"},
	{fleet.AWS, "us-east-1", "p5.48xlarge", "us-east-1b"},
	{fleet.Azure, "eastus", "Standard_NC24ads_A100_v4", ""},
	{fleet.GCP, "europe-west4", "g2-standard-48", "europe-west4-a"},
	{fleet.GCP, "europe-west4", "g2-standard-4", "europe-west4-b"},
}

// FleetFrom builds a fleet with commitments from fuzz input: instances of
// the test catalog's types in a few accounts, zones and hours, and
// commitments of every kind over them.
func fleetFrom(b []byte) *fleet.Fleet {
	s := &bytesSource{b: b}
	f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
	for i, n := 0, 1+s.next(12); i < n; i++ {
		t := fuzzTypes[s.next(len(fuzzTypes))]
		in := fleet.Instance{ID: fmt.Sprintf("i%d", i), Provider: t.p, Region: t.region, InstanceType: t.typ,
			Lifecycle: fleet.OnDemand, State: fleet.Running, Account: fmt.Sprintf("a%d", s.next(2))}
		if s.next(2) == 1 {
			in.Zone = t.zoneA
		}
		switch s.next(4) {
		case 1:
			h := float64(s.next(745))
			in.Usage.HoursPerMonth = &h
			// Samples every few hours over one to three weeks place its hours.
			if s.next(2) == 1 {
				step := time.Duration(1+s.next(12)) * time.Hour
				var ss []fleet.Sample
				for t := now.AddDate(0, 0, -7*(1+s.next(3))); t.Before(now); t = t.Add(step) {
					ss = append(ss, fleet.Sample{Time: t, GPU: fleet.PerGPU{float64(s.next(101))}})
				}
				in.Utilization = &fleet.Utilization{Samples: ss}
			}
		case 2:
			in.State = fleet.Stopped
		case 3:
			// A weekly schedule, in one of a few time zones.
			start := s.next(24)
			end := start + 1 + s.next(24-start)
			in.Usage.Schedule = &fleet.Schedule{Timezone: []string{"", "Europe/Berlin", "Asia/Kolkata", "America/New_York"}[s.next(4)],
				Windows: []fleet.Window{{Days: [][]string{{"mon", "tue", "wed", "thu", "fri"}, {"sat", "sun"}, {"wed"}}[s.next(3)],
					Start: fmt.Sprintf("%02d:%02d", start, 30*s.next(2)), End: fmt.Sprintf("%02d:00", end)}}}
		}
		f.Instances = append(f.Instances, in)
	}
	kinds := []string{fleet.HeldStandardRI, fleet.HeldConvertibleRI, fleet.HeldComputeSavingsPlan, fleet.HeldEC2SavingsPlan, fleet.HeldCapacityReservation,
		fleet.HeldCapacityBlock, fleet.HeldReservation, fleet.HeldSavingsPlan, fleet.HeldResourceCUD, fleet.HeldSpendCUD, fleet.HeldGCPReservation}
	for i, n := 0, s.next(6); i < n; i++ {
		kind := kinds[s.next(len(kinds))]
		var p fleet.Provider
		for q, ks := range fleet.HeldKinds {
			for _, k := range ks {
				if k == kind && (p == "" || q < p) {
					p = q
				}
			}
		}
		var t = fuzzTypes[0]
		for j, k := 0, s.next(len(fuzzTypes)); j < len(fuzzTypes); j++ {
			if c := fuzzTypes[(j+k)%len(fuzzTypes)]; c.p == p {
				t = c
				break
			}
		}
		h := fleet.Held{ID: fmt.Sprintf("c%d", i), Provider: p, Kind: kind, Term: []string{"1y", "3y"}[s.next(2)], Account: "a0"}
		h.Scope.Level = []string{"", "region", "account", "shared"}[s.next(4)]
		if s.next(2) == 1 {
			h.Scope.Region = t.region
		}
		if s.next(4) == 1 && t.zoneA != "" {
			h.Scope.Level, h.Scope.Zone = "zone", t.zoneA
		}
		amount := decimal.New(int64(1+s.next(200)), -1)
		h.HourlyRate = &amount
		switch {
		case (&h).PerHour():
			h.HourlyRate = nil
			h.HourlyCommitment = &amount
			h.InstanceFamily = Family(t.typ)
			h.Scope.Region = t.region
		case kind == fleet.HeldResourceCUD:
			h.HourlyRate = nil
			if s.next(3) > 0 {
				h.HourlyCommitment = &amount
			}
			h.Scope.Region = t.region
			h.Resources = []fleet.HeldResource{{Type: "gpu", GPUModel: "L4", Amount: float64(1 + s.next(8))}}
			if s.next(2) == 1 {
				h.Resources = append(h.Resources, fleet.HeldResource{Type: "vcpu", Amount: float64(1 + s.next(100))})
			}
		default:
			h.InstanceType = t.typ
			h.Count = float64(1+s.next(4)) / float64(1+s.next(2))
			h.SizeFlexible = s.next(2) == 1
			if s.next(4) == 0 {
				h.HourlyRate = nil
			}
		}
		if (&h).Termless() {
			h.Term = ""
		}
		if s.next(5) == 0 {
			end := now.Add(-time.Hour)
			h.End = &end
		}
		f.Commitments = append(f.Commitments, h)
	}
	for i := range f.Instances {
		if len(f.Commitments) > 0 && s.next(4) == 0 {
			h := f.Commitments[s.next(len(f.Commitments))]
			if h.Provider == f.Instances[i].Provider {
				f.Instances[i].Lifecycle = fleet.Committed
				f.Instances[i].Commitment = &fleet.Commitment{ID: h.ID}
			}
		}
	}
	return f
}

// FuzzAllocate: over any fleet with commitments, valid or not, it never
// panics, no instance is covered
// past 100 %, no commitment past its capacity, and what the parts charge
// never exceeds what the commitments are paid.
func FuzzAllocate(f *testing.F) {
	unitPriced := g2Prices(true)
	f.Add([]byte{})
	f.Add([]byte{5, 3, 0, 0, 2, 1, 1, 3, 4, 0, 1, 0, 3, 2, 1, 1, 0, 8, 9, 0, 1})
	f.Add([]byte{11, 0, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 5, 5, 5, 6, 6, 6, 5, 8, 5, 0, 1, 2, 7, 3, 9, 1, 0, 1, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		// Unvalidated too: a scan's commitments are not checked as a file's.
		fl := fleetFrom(data)
		r := Allocate(Input{Fleet: fl, Catalog: testCatalog(), Now: now,
			FallbackDiscount: func(fleet.Provider, string) (float64, bool) { return 0.3, true }})
		checkInvariants(t, fl, r)
		// With per-resource prices, resource CUDs split machines by price.
		checkInvariants(t, fl, Allocate(Input{Fleet: fl, Catalog: unitPriced, Now: now}))
		// The same fleet listed backwards allocates alike: a scan lists in
		// another order than a file (IDs unique, as a scan's are).
		if !uniqueIDs(fl) {
			return
		}
		rev := &fleet.Fleet{Metadata: fl.Metadata, Instances: slices.Clone(fl.Instances), Commitments: slices.Clone(fl.Commitments)}
		slices.Reverse(rev.Instances)
		slices.Reverse(rev.Commitments)
		r2 := Allocate(Input{Fleet: rev, Catalog: testCatalog(), Now: now,
			FallbackDiscount: func(fleet.Provider, string) (float64, bool) { return 0.3, true }})
		for id, c := range r.Instances {
			c2 := r2.Instances[id]
			if c2 == nil || math.Abs(c.Share-c2.Share) > 1e-9 {
				t.Fatalf("instance %s covered %v listed forwards, %+v backwards", id, c.Share, c2)
			}
		}
		if len(r.Instances) != len(r2.Instances) {
			t.Fatalf("%d instances covered forwards, %d backwards", len(r.Instances), len(r2.Instances))
		}
		used := map[string]string{}
		for _, u := range r.Commitments {
			used[u.ID] = u.UsedMonthly.String()
		}
		for _, u := range r2.Commitments {
			if used[u.ID] != u.UsedMonthly.String() {
				t.Fatalf("commitment %s uses %s forwards, %s backwards", u.ID, used[u.ID], u.UsedMonthly)
			}
		}
	})
}

func uniqueIDs(f *fleet.Fleet) bool {
	seen := map[string]bool{}
	for _, in := range f.Instances {
		if seen["i"+in.ID] {
			return false
		}
		seen["i"+in.ID] = true
	}
	for _, h := range f.Commitments {
		if seen["c"+h.ID] {
			return false
		}
		seen["c"+h.ID] = true
	}
	return true
}
