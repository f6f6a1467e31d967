package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpufinops/gpufinops/internal/fleetgen"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// TestReadFleetIsShapeOf: the shape streamed from a generated fleet's file
// is the shape of the fleet completed from the catalog, and the AWS base
// account is the most common one.
func TestReadFleetIsShapeOf(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	f, err := fleetgen.Mixed(fleetgen.MixedOptions{Instances: 400, Seed: 7, RegionCount: 4, Accounts: 3}, cat)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fleet.Marshal(f, fleet.FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fleet.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := readFleet(path, cat)
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ShapeOf(f), g.Shape); diff != "" {
		t.Errorf("streamed shape (-ShapeOf +readFleet):\n%s", diff)
	}
	n := map[string]int{}
	for _, in := range f.Instances {
		if in.Provider == fleet.AWS {
			n[in.Account]++
		}
	}
	if g.Instances != 400 || len(g.AWSRoles) != 2 || len(g.AWSRegions) != 4 {
		t.Errorf("%d instances, roles %v, regions %v", g.Instances, g.AWSRoles, g.AWSRegions)
	}
	for _, r := range g.AWSRoles {
		if n[r] > n[g.AWSBase] {
			t.Errorf("base %s has %d instances, role account %s %d", g.AWSBase, n[g.AWSBase], r, n[r])
		}
	}
	if _, err := readFleet(filepath.Join(t.TempDir(), "none.json"), cat); err == nil {
		t.Error("a missing file read")
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"instances": 3}`), 0o644)
	if _, err := readFleet(bad, cat); err == nil {
		t.Error("instances that are not a list read")
	}
}

// TestOutcomeOf: two reports with the same recommendations and instance
// costs in another order have one outcome; a changed cost changes it.
func TestOutcomeOf(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.json", `{"schemaVersion":"1.6","summary":{"currentMonthlyCost":10,"monthlySavings":4},
		"recommendations":[{"kind":"idle-stop","resourceId":"i-1","target":"stop","currentMonthlyCost":6,"projectedMonthlyCost":2,"evidence":{"x":[1,2]}},
		{"kind":"spot","resourceId":"i-2","target":"spot","currentMonthlyCost":4,"projectedMonthlyCost":4}],
		"instances":[{"resourceId":"i-1","currentMonthlyCost":6,"optimizedMonthlyCost":2},{"resourceId":"i-2","currentMonthlyCost":4,"optimizedMonthlyCost":4}]}`)
	b := write("b.json", `{"instances":[{"resourceId":"i-2","currentMonthlyCost":4,"optimizedMonthlyCost":4},{"resourceId":"i-1","currentMonthlyCost":6,"optimizedMonthlyCost":2}],
		"recommendations":[{"kind":"spot","resourceId":"i-2","target":"spot","currentMonthlyCost":4,"projectedMonthlyCost":4},
		{"kind":"idle-stop","resourceId":"i-1","target":"stop","currentMonthlyCost":6,"projectedMonthlyCost":2}],
		"summary":{"currentMonthlyCost":10,"monthlySavings":4}}`)
	c := write("c.json", `{"summary":{"currentMonthlyCost":10,"monthlySavings":4},"recommendations":[],
		"instances":[{"resourceId":"i-1","currentMonthlyCost":6,"optimizedMonthlyCost":2.5},{"resourceId":"i-2","currentMonthlyCost":4,"optimizedMonthlyCost":4}]}`)
	oa, err := outcomeOf(a)
	if err != nil {
		t.Fatal(err)
	}
	ob, err := outcomeOf(b)
	if err != nil {
		t.Fatal(err)
	}
	oc, err := outcomeOf(c)
	if err != nil {
		t.Fatal(err)
	}
	if oa != ob || oa.Instances != 2 || oa.Recommendations != 2 || oa.Current != "10.00" || oa.Savings != "4.00" {
		t.Errorf("same report, outcomes %+v and %+v", oa, ob)
	}
	if oc.Digest == oa.Digest {
		t.Error("a changed instance cost left the digest as it was")
	}
	if _, err := outcomeOf(write("d.json", `{"instances": 3}`)); err == nil {
		t.Error("a report whose instances are not a list read")
	}
}
