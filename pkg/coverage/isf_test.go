package coverage

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

func TestDerivedISF(t *testing.T) {
	for _, tc := range []struct {
		size, group string
		ratio       float64
	}{
		{"Standard_NC24ads_A100_v4", "NCads_A100_v4", 24},
		{"Standard_NC48ads_A100_v4", "NCads_A100_v4", 48},
		{"standard_nc96ads_a100_v4", "NCads_A100_v4", 96},
		{"Standard_NC4as_T4_v3", "NCas_T4_v3", 4},
		{"Standard_NC64as_T4_v3", "NCas_T4_v3", 64},
		{"Standard_NV6ads_A10_v5", "NVads_A10_v5", 6},
		{"Standard_NV72ads_A10_v5", "NVads_A10_v5", 72},
		{"Standard_NV36adms_A10_v5", "NVadms_A10_v5", 36},
		{"Standard_ND96isr_H100_v5", "NDisr_H100_v5", 96},
		{"Standard_NC40ads_H100_v5", "NCads_H100_v5", 40},
		{"Standard_NC6s_v3", "NCs_v3", 6},
		{"Standard_NC24rs_v3", "NCrs_v3", 24},
		{"Standard_NC12", "NC", 12},
	} {
		got, ok := DerivedISF(tc.size)
		if !ok || got.Group != tc.group || got.Ratio != tc.ratio || !got.Derived {
			t.Errorf("%s: %+v %v, want %s %v", tc.size, got, ok, tc.group, tc.ratio)
		}
	}
	for _, size := range []string{"Standard_D4s_v5", "Standard_E4-2s_v3", "Standard_NC8-4as_T4_v3", "Standard_NC24ads_A100_v4_Promo",
		"Standard_NC_v3", "NC24ads_A100_v4", "Standard_N24", "Standard_NC0s_v3", "Standard_NC24ads_A100_x4", "Standard_NC24ads_A1-0_v4", "", "p5.48xlarge", "g2-standard-4"} {
		if g, ok := DerivedISF(size); ok {
			t.Errorf("%s: derived %+v", size, g)
		}
	}
}

const isfCSV = "\ufeffInstanceSizeFlexibilityGroup,ArmSkuName,Ratio\n" +
	"NCadsA100v4 Series,Standard_NC24ads_A100_v4,1\n" +
	"NCadsA100v4 Series,Standard_NC48ads_A100_v4,2\n" +
	"NCadsA100v4 Series,Standard_NC96ads_A100_v4,4\n" +
	"Odd Series,Standard_NC4as_T4_v3,1\n" +
	"Odd Series,Standard_NC8as_T4_v3,3\n"

func TestParseISF(t *testing.T) {
	tab, err := ParseISF(strings.NewReader(isfCSV), "isf.csv")
	if err != nil || tab.Len() != 5 {
		t.Fatalf("%v %d", err, tab.Len())
	}
	if s, ok := tab.Lookup("standard_nc96ads_a100_v4"); !ok || s.Group != "NCadsA100v4 Series" || s.Ratio != 4 || s.Derived {
		t.Errorf("lookup %+v %v", s, ok)
	}
	if s, ok := tab.Lookup("Standard_NV12ads_A10_v5"); !ok || !s.Derived {
		t.Errorf("a size the table does not list is derived: %+v %v", s, ok)
	}
	// Columns in another order, other columns and case.
	if tab, err := ParseISF(strings.NewReader("Ratio,armskuname,Extra,INSTANCESIZEFLEXIBILITYGROUP\n2,Standard_X,,G\n"), "x.csv"); err != nil || tab.Len() != 1 {
		t.Errorf("reordered: %v", err)
	}
	for _, tc := range []struct{ in, want string }{
		{"", "isf.csv: empty"},
		{"ArmSkuName,Ratio\nStandard_X,1\n", "isf.csv:1: no InstanceSizeFlexibilityGroup column"},
		{"InstanceSizeFlexibilityGroup,ArmSkuName,Ratio,ratio\n", "isf.csv:1: column \"ratio\" twice"},
		{"InstanceSizeFlexibilityGroup,ArmSkuName,Ratio\nG,Standard_X,1\nG,Standard_Y,zero\n", `isf.csv:3: ratio "zero" of Standard_Y is not a positive number`},
		{"InstanceSizeFlexibilityGroup,ArmSkuName,Ratio\nG,Standard_X,-1\n", "isf.csv:2: ratio \"-1\""},
		{"InstanceSizeFlexibilityGroup,ArmSkuName,Ratio\nG,Standard_X,NaN\n", "isf.csv:2: ratio \"NaN\""},
		{"InstanceSizeFlexibilityGroup,ArmSkuName,Ratio\nG,Standard_X\n", "isf.csv:2: 2 fields, no ratio"},
		{"InstanceSizeFlexibilityGroup,ArmSkuName,Ratio\n,Standard_X,1\n", "isf.csv:2: empty group or size name"},
		{"InstanceSizeFlexibilityGroup,ArmSkuName,Ratio\nG,Standard_X,1\nH,standard_x,1\n", "isf.csv:3: standard_x is listed again (line 2)"},
		{"InstanceSizeFlexibilityGroup,ArmSkuName,Ratio\nG,\"Standard_X,1\n", "isf.csv:2:"},
	} {
		_, err := ParseISF(strings.NewReader(tc.in), "isf.csv")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
	// The same row twice is not an error.
	if _, err := ParseISF(strings.NewReader("InstanceSizeFlexibilityGroup,ArmSkuName,Ratio\nG,Standard_X,1\nG,Standard_X,1\n"), "x"); err != nil {
		t.Error(err)
	}
}

func FuzzParseISF(f *testing.F) {
	f.Add(isfCSV)
	f.Add("Ratio,ArmSkuName,InstanceSizeFlexibilityGroup\n0.5,a,b\n")
	f.Add("InstanceSizeFlexibilityGroup,ArmSkuName,Ratio\n\"G\"\"x\",S,1e3\n")
	f.Fuzz(func(t *testing.T, in string) {
		tab, err := ParseISF(strings.NewReader(in), "f.csv")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.csv") {
				t.Fatalf("error without the file's name: %v", err)
			}
			return
		}
		for k, s := range tab.sizes {
			if !(s.Ratio > 0) || math.IsInf(s.Ratio, 0) || s.Group == "" || k != strings.ToLower(k) {
				t.Fatalf("%q: %+v", k, s)
			}
		}
	})
}

func azureVM(id, typ string) fleet.Instance {
	in := inst(id, fleet.Azure, "eastus", typ)
	in.Account = "s1"
	return in
}

func isfReservation(id, typ string, count float64, flexible bool) fleet.Held {
	return fleet.Held{ID: id, Provider: fleet.Azure, Kind: fleet.HeldReservation, Term: "1y", Scope: fleet.HeldScope{Level: "shared", Region: "eastus"},
		InstanceType: typ, Count: count, SizeFlexible: flexible, HourlyRate: dec("3")}
}

func TestAzureInstanceSizeFlexibility(t *testing.T) {
	t.Run("own size first, then the group by ratio", func(t *testing.T) {
		// Two NC24ads units: the NC24ads VM takes one, the NC48ads (2 units)
		// half of its hours; the T4 and the D-series VM are other groups.
		f := &fleet.Fleet{Instances: []fleet.Instance{azureVM("a-48", "Standard_NC48ads_A100_v4"), azureVM("b-24", "Standard_NC24ads_A100_v4"),
			azureVM("c-t4", "Standard_NC4as_T4_v3"), azureVM("d", "Standard_D4s_v5")},
			Commitments: []fleet.Held{isfReservation("res", "Standard_NC24ads_A100_v4", 2, true)}}
		r := allocate(t, f)
		if r.Instances["b-24"].Share != 1 || r.Instances["a-48"].Share != 0.5 || r.Instances["c-t4"] != nil || r.Instances["d"] != nil {
			t.Errorf("%+v", r.Instances)
		}
		if u := r.Commitments[0]; u.Utilization != 1 || !strings.Contains(u.Capacity, "group NCads_A100_v4") || len(u.Notes) != 1 {
			t.Errorf("%+v", u)
		}
	})
	t.Run("a big reservation covers small sizes", func(t *testing.T) {
		// One NC96ads (4 units of NC24ads): two NC24ads and one NC48ads in full.
		f := &fleet.Fleet{Instances: []fleet.Instance{azureVM("x", "Standard_NC24ads_A100_v4"), azureVM("y", "Standard_NC24ads_A100_v4"),
			azureVM("z", "Standard_NC48ads_A100_v4"), azureVM("w", "Standard_NC24ads_A100_v4")},
			Commitments: []fleet.Held{isfReservation("res", "Standard_NC96ads_A100_v4", 1, true)}}
		r := allocate(t, f)
		sum := 0.0
		for i, in := range f.Instances {
			if c := r.Instances[in.ID]; c != nil {
				n, _ := DerivedISF(f.Instances[i].InstanceType)
				sum += c.Share * n.Ratio
			}
		}
		if math.Abs(sum-96) > 1e-9 || r.Commitments[0].Utilization != 1 {
			t.Errorf("covered %v vCPU-units of 96: %+v", sum, r.Instances)
		}
	})
	t.Run("not flexible: its own size only", func(t *testing.T) {
		f := &fleet.Fleet{Instances: []fleet.Instance{azureVM("a-48", "Standard_NC48ads_A100_v4")},
			Commitments: []fleet.Held{isfReservation("res", "Standard_NC24ads_A100_v4", 2, false)}}
		if r := allocate(t, f); len(r.Instances) != 0 {
			t.Errorf("%+v", r.Instances)
		}
	})
	t.Run("T4 and A10 series", func(t *testing.T) {
		f := &fleet.Fleet{Instances: []fleet.Instance{azureVM("t4-16", "Standard_NC16as_T4_v3"), azureVM("a10-12", "Standard_NV12ads_A10_v5"), azureVM("a10-36m", "Standard_NV36adms_A10_v5")},
			Commitments: []fleet.Held{isfReservation("t4", "Standard_NC64as_T4_v3", 1, true), isfReservation("a10", "Standard_NV36ads_A10_v5", 1, true)}}
		r := allocate(t, f)
		if r.Instances["t4-16"].Share != 1 || r.Instances["a10-12"].Share != 1 || r.Instances["a10-36m"] != nil {
			t.Errorf("%+v", r.Instances)
		}
		// 16 of 64 and 12 of 36 units used.
		if u := r.Commitments[0]; u.Utilization != 0.25 {
			t.Errorf("t4 %+v", u)
		}
		if u := r.Commitments[1]; math.Abs(u.Utilization-1.0/3) > 1e-9 || u.CandidateCount != 0 {
			t.Errorf("a10 %+v", u)
		}
	})
	t.Run("the table overrides the derived ratios", func(t *testing.T) {
		tab, err := ParseISF(strings.NewReader(isfCSV), "isf.csv")
		if err != nil {
			t.Fatal(err)
		}
		// In the table an NC8as_T4_v3 is 3 NC4as units: one NC4as × 3
		// reservation covers it in full (derived: 8 ÷ 4 = 2 units).
		f := &fleet.Fleet{Instances: []fleet.Instance{azureVM("t4-8", "Standard_NC8as_T4_v3"), azureVM("t4-16", "Standard_NC16as_T4_v3")},
			Commitments: []fleet.Held{isfReservation("t4", "Standard_NC4as_T4_v3", 3, true)}}
		f.APIVersion, f.Kind = fleet.APIVersion, fleet.Kind
		r := Allocate(Input{Fleet: f, Catalog: testCatalog(), Now: now, ISF: tab})
		checkInvariants(t, f, r)
		// NC16as is not in the table's group: not covered.
		if r.Instances["t4-8"].Share != 1 || r.Instances["t4-16"] != nil || len(r.Commitments[0].Notes) != 0 || r.Commitments[0].Utilization != 1 {
			t.Errorf("%+v %+v", r.Instances, r.Commitments[0])
		}
		r = Allocate(Input{Fleet: f, Catalog: testCatalog(), Now: now})
		// Derived: 12 vCPU-units, which t4-16 (first by ID) takes, 12 of its 16.
		if r.Instances["t4-8"] != nil || math.Abs(r.Instances["t4-16"].Share-0.75) > 1e-9 {
			t.Errorf("derived: t4-8 %+v t4-16 %+v", r.Instances["t4-8"], r.Instances["t4-16"])
		}
	})
	t.Run("unknown group: own size only, noted", func(t *testing.T) {
		f := &fleet.Fleet{Instances: []fleet.Instance{azureVM("d8", "Standard_D8s_v5")},
			Commitments: []fleet.Held{isfReservation("d", "Standard_D4s_v5", 2, true)}}
		r := allocate(t, f)
		if len(r.Instances) != 0 || len(r.Commitments[0].Notes) != 1 || !strings.Contains(r.Commitments[0].Notes[0], "own size only") {
			t.Errorf("%+v %+v", r.Instances, r.Commitments[0])
		}
	})
}

// TestISFProperties: over random Azure fleets and reservations, making the
// reservations size-flexible never lowers any machine's covered share (so
// never raises what its stop or resize may claim to save), and no
// reservation covers more than its capacity: the covered instance-hours ×
// ratio never exceed count × the reserved size's ratio × the month's hours.
func TestISFProperties(t *testing.T) {
	sizes := []string{"Standard_NC24ads_A100_v4", "Standard_NC48ads_A100_v4", "Standard_NC96ads_A100_v4",
		"Standard_NC4as_T4_v3", "Standard_NC8as_T4_v3", "Standard_NC16as_T4_v3", "Standard_NC64as_T4_v3",
		"Standard_NV6ads_A10_v5", "Standard_NV18ads_A10_v5", "Standard_NV36ads_A10_v5", "Standard_ND96isr_H100_v5"}
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 33))
		f := &fleet.Fleet{APIVersion: fleet.APIVersion, Kind: fleet.Kind}
		for i := range 1 + r.IntN(12) {
			in := azureVM(fmt.Sprintf("vm%02d", i), sizes[r.IntN(len(sizes))])
			if r.IntN(3) == 0 {
				h := float64(r.IntN(731))
				in.Usage.HoursPerMonth = &h
			}
			f.Instances = append(f.Instances, in)
		}
		for i := range 1 + r.IntN(4) {
			f.Commitments = append(f.Commitments, isfReservation(fmt.Sprintf("res%d", i), sizes[r.IntN(len(sizes))], float64(1+r.IntN(3)), false))
		}
		fixed := Allocate(Input{Fleet: f, Now: now})
		for i := range f.Commitments {
			f.Commitments[i].SizeFlexible = true
		}
		flex := Allocate(Input{Fleet: f, Now: now})
		checkInvariants(t, f, flex)
		for _, in := range f.Instances {
			var before, after float64
			if c := fixed.Instances[in.ID]; c != nil {
				before = c.Share
			}
			if c := flex.Instances[in.ID]; c != nil {
				after = c.Share
			}
			if after < before-1e-9 {
				t.Fatalf("seed %d: %s covered %v without flexibility, %v with", seed, in.ID, before, after)
			}
		}
		hours, types := map[string]float64{}, map[string]string{}
		for _, in := range f.Instances {
			hours[in.ID], types[in.ID] = in.MonthlyHours(), in.InstanceType
		}
		for i, u := range flex.Commitments {
			h := f.Commitments[i]
			held, _ := DerivedISF(h.InstanceType)
			used := 0.0
			for id, c := range flex.Instances {
				n, _ := DerivedISF(types[id])
				for _, p := range c.Parts {
					if p.CommitmentID == u.ID {
						used += p.Share * hours[id] * n.Ratio
					}
				}
			}
			if capacity := h.Count * held.Ratio * fleet.HoursPerMonth; used > capacity*(1+1e-9) {
				t.Fatalf("seed %d: %s covers %v ratio-hours of %v", seed, u.ID, used, capacity)
			}
		}
	}
}

func TestReadISFFile(t *testing.T) {
	if _, err := ReadISFFile(t.TempDir() + "/none.csv"); err == nil || !strings.Contains(err.Error(), "none.csv: no such file") {
		t.Errorf("%v", err)
	}
}

func TestPartResized(t *testing.T) {
	f := &fleet.Fleet{Instances: []fleet.Instance{inst("g5", fleet.AWS, "us-east-1", "g5.12xlarge"), azureVM("nc", "Standard_NC48ads_A100_v4"), inst("p5", fleet.AWS, "us-east-1", "p5.48xlarge")},
		Commitments: []fleet.Held{ri("ri-g5", "g5.12xlarge", 1, true), isfReservation("res", "Standard_NC24ads_A100_v4", 2, true), ri("ri-p5", "p5.48xlarge", 1, false)}}
	r := allocate(t, f)
	for _, tc := range []struct {
		id, from, to string
		want         float64
		ok           bool
	}{
		{"g5", "g5.12xlarge", "g5.xlarge", 12, true},
		{"g5", "g5.12xlarge", "g5.24xlarge", 0.5, true},
		{"g5", "g5.12xlarge", "g6.xlarge", 0, false},
		{"nc", "Standard_NC48ads_A100_v4", "Standard_NC24ads_A100_v4", 2, true},
		{"nc", "Standard_NC48ads_A100_v4", "Standard_NC4as_T4_v3", 0, false},
		{"p5", "p5.48xlarge", "p5.24xlarge", 0, false},
	} {
		got, ok := r.Instances[tc.id].Parts[0].Resized(tc.from, tc.to)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s %s → %s: %v %v, want %v %v", tc.id, tc.from, tc.to, got, ok, tc.want, tc.ok)
		}
	}
}
