package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/cmd/factory"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers"
	"github.com/gpufinops/gpufinops/providers/providertest"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// commitmentsFile is testdata/fleets/commitments.yaml and the fleet it
// holds.
func commitmentsFile(t *testing.T) (string, *fleet.Fleet) {
	path := filepath.Join("..", "..", "testdata", "fleets", "commitments.yaml")
	return path, providertest.ReadFleet(t, path)
}

// serveAllClouds serves f, commitments included, from every registered
// simulator on one port, as cloudsim does, and points the SDKs at it.
func serveAllClouds(t *testing.T, f *fleet.Fleet, fault func(service, op, scope string) (int, string)) *simkit.Kit {
	t.Helper()
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(f, cat); err != nil {
		t.Fatal(err)
	}
	kit, err := simkit.New(simkit.Options{Seed: 1, Ops: simkit.RegisteredOps(), Fault: fault})
	if err != nil {
		t.Fatal(err)
	}
	var sims []simkit.Sim
	for _, reg := range simkit.Registered() {
		s, err := reg.Build(f, simkit.Env{Kit: kit, Now: func() time.Time { return demoEnd }})
		if err != nil {
			t.Fatal(err)
		}
		sims = append(sims, s)
	}
	allCloudsEnv(t, h2cServer(t, simkit.Mux(kit, sims...)), nil)
	return kit
}

// heldLines are the commitments in force at demoEnd, one JSON line each,
// without where they were read (the file says "fleet" or nothing, a scan
// the API), sorted.
func heldLines(hs []fleet.Held) []string {
	var out []string
	for _, h := range hs {
		if (h.Start != nil && demoEnd.Before(*h.Start)) || (h.End != nil && !demoEnd.Before(*h.End)) {
			continue
		}
		h.Source = ""
		b, _ := json.Marshal(h)
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}

// inventoryFleet runs inventory -o json with args and decodes the fleet.
func inventoryFleet(t *testing.T, args ...string) *fleet.Fleet {
	t.Helper()
	code, out, stderr := gpufinops(t, append([]string{"inventory", "-o", "json"}, args...)...)
	if code != cmdutil.ExitOK {
		t.Fatalf("inventory %v exited %d: %s", args, code, stderr)
	}
	var f fleet.Fleet
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("inventory %v: %v", args, err)
	}
	return &f
}

// TestCommitmentsThroughCloudsim (issue 33): the commitments of a fleet
// file on three clouds, served by the simulators through each cloud's own
// APIs, come back from the production scan of `--provider
// aws,azure,gcp` exactly as the file has them, the expired ones left out;
// `inventory --provider` and `inventory --fleet` on the same file give the
// same.
func TestCommitmentsThroughCloudsim(t *testing.T) {
	path, f := commitmentsFile(t)
	want := heldLines(f.Commitments)
	if len(want) != 15 || len(f.Commitments) != 20 {
		t.Fatalf("the fixture has %d commitments, %d in force: not the fleet this test is about", len(f.Commitments), len(want))
	}
	kit := serveAllClouds(t, f, nil)
	ios, _, _, _ := iostreams.Test()
	fac := factory.New()
	fac.IOStreams = ios
	fac.Now = func() time.Time { return demoEnd }
	cfg, err := fac.Config()
	if err != nil {
		t.Fatal(err)
	}
	scan, err := fac.Scan(context.Background(), cmdutil.FleetFlags{Providers: []string{"aws", "azure", "gcp"}, LookbackDays: 7, Quiet: true}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Failures) > 0 {
		t.Fatalf("the scan failed in part: %v", scan.Failures)
	}
	got := heldLines(scan.Fleet.Commitments)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("a scan through cloudsim read\n%s\nthe file holds\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, h := range scan.Fleet.Commitments {
		if h.Source == "" || h.Source == "fleet" {
			t.Errorf("%s: source %q, want the API it was read from", h.ID, h.Source)
		}
	}
	for _, op := range []string{"ec2:DescribeReservedInstances", "savingsplans:DescribeSavingsPlans", "ec2:DescribeCapacityReservations",
		"capacity:ListReservations", "billingbenefits:ListSavingsPlans", "compute:regionCommitments.aggregatedList", "compute:reservations.aggregatedList"} {
		svc, name, _ := strings.Cut(op, ":")
		if kit.Counts()[svc][name] == 0 {
			t.Errorf("%s was never called", op)
		}
	}
	for _, args := range [][]string{{"--provider", "aws,azure,gcp"}, {"--fleet", path}} {
		other := heldLines(inventoryFleet(t, args...).Commitments)
		switch {
		case len(other) == 0:
			t.Errorf("inventory %v wrote no commitments", args)
		case strings.Join(other, "\n") != strings.Join(got, "\n"):
			t.Errorf("inventory %v gives\n%s\nthe scan read\n%s", args, strings.Join(other, "\n"), strings.Join(got, "\n"))
		}
	}
}

// TestCommitmentsDeniedIsAWarning (issue 33): a commitment API the
// credentials may not call makes `analyze --provider aws,azure,gcp` a
// partial result (exit code 3) with a commitments-failed warning that
// names the API and what it means for the advice; the report still comes.
func TestCommitmentsDeniedIsAWarning(t *testing.T) {
	_, f := commitmentsFile(t)
	serveAllClouds(t, f, func(service, op, scope string) (int, string) {
		if op == "DescribeSavingsPlans" {
			return http.StatusBadRequest, "AccessDeniedException"
		}
		return 0, ""
	})
	code, out, stderr := gpufinops(t, "analyze", "--provider", "aws,azure,gcp", "-o", "json")
	if code != cmdutil.ExitPartial {
		t.Fatalf("analyze exited %d, want %d (partial): %s", code, cmdutil.ExitPartial, stderr)
	}
	if !strings.Contains(stderr, "savingsplans:DescribeSavingsPlans could not be read for aws:") || !strings.Contains(stderr, "the commitments it lists are missing, so the advice may count savings on capacity already committed") {
		t.Errorf("stderr does not name the API and what it means:\n%s", stderr)
	}
	if strings.Contains(stderr, "was not scanned") || strings.Contains(stderr, "its instances are missing") {
		t.Errorf("a commitment API that failed is told as a scope not scanned:\n%s", stderr)
	}
	var r struct {
		Warnings []struct{ Code, Reason, Message string }
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("no report: %v", err)
	}
	found := false
	for _, w := range r.Warnings {
		if w.Code == providers.ScanCommitmentsFailed && strings.Contains(w.Reason, "DescribeSavingsPlans") {
			found = true
			if !strings.HasPrefix(w.Message, "savingsplans:DescribeSavingsPlans could not be read for aws:") || strings.Contains(w.Message, "not scanned") {
				t.Errorf("warning message %q", w.Message)
			}
		}
	}
	if !found {
		t.Errorf("the report has no %s warning: %+v", providers.ScanCommitmentsFailed, r.Warnings)
	}
}

// TestCommittedEstateAnalyzeMatchesFile (issue 33, "Done when"): on a fleet
// with reserved instances, savings plans, Azure reservations and GCP CUDs,
// `analyze --provider aws,azure,gcp` through cloudsim gives the same
// recommendations, instance costs, commitment coverage and totals as
// `analyze --fleet` on the same file, and no recommendation saves on an
// instance whose hours the commitments cover in full.
func TestCommittedEstateAnalyzeMatchesFile(t *testing.T) {
	path, f := commitmentsFile(t)
	serveAllClouds(t, f, nil)
	type rec struct {
		ID             string          `json:"id"`
		ResourceID     string          `json:"resourceId"`
		Kind           string          `json:"kind"`
		MonthlySavings json.RawMessage `json:"monthlySavings"`
	}
	type inst struct {
		ResourceID            string          `json:"resourceId"`
		CoveredShare          float64         `json:"coveredShare"`
		CoveredBy             []string        `json:"coveredBy"`
		CommitmentMonthlyCost json.RawMessage `json:"commitmentMonthlyCost"`
		CurrentMonthlyCost    json.RawMessage `json:"currentMonthlyCost"`
		MonthlySavings        json.RawMessage `json:"monthlySavings"`
	}
	type rep struct {
		Summary struct {
			Current json.RawMessage `json:"currentMonthlyCost"`
			Savings json.RawMessage `json:"monthlySavings"`
			Unused  json.RawMessage `json:"unusedCommitmentMonthlyCost"`
		} `json:"summary"`
		Recommendations []rec           `json:"recommendations"`
		Instances       []inst          `json:"instances"`
		Held            json.RawMessage `json:"commitmentsHeld"`
	}
	run := func(args ...string) (rep, string) {
		t.Helper()
		code, out, stderr := gpufinops(t, append([]string{"analyze", "-o", "json"}, args...)...)
		if code != cmdutil.ExitOK && code != cmdutil.ExitPartial {
			t.Fatalf("analyze %v exited %d: %s", args, code, stderr)
		}
		var r rep
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("analyze %v: no report: %v", args, err)
		}
		return r, stderr
	}
	lines := func(r rep) []string {
		var out []string
		out = append(out, fmt.Sprintf("summary current %s savings %s unused %s", r.Summary.Current, r.Summary.Savings, r.Summary.Unused))
		for _, x := range r.Recommendations {
			out = append(out, fmt.Sprintf("rec %s %s %s %s", x.ID, x.ResourceID, x.Kind, x.MonthlySavings))
		}
		for _, x := range r.Instances {
			out = append(out, fmt.Sprintf("inst %s covered %.4f by %v commitment %s cost %s saves %s", x.ResourceID, x.CoveredShare, x.CoveredBy, x.CommitmentMonthlyCost, x.CurrentMonthlyCost, x.MonthlySavings))
		}
		sort.Strings(out)
		return out
	}
	live, _ := run("--provider", "aws,azure,gcp")
	file, _ := run("--fleet", path)
	// Amounts may differ by a cent: a scan reads GCP's per-unit vCPU, memory
	// and GPU prices, which split a machine's resource-CUD share by price,
	// where the file's catalog has none (the scarcest-resource rule); a
	// machine covered in full by a CUD and a reservation then has its cost
	// split, and rounded, in other parts.
	if got, want := lines(live), lines(file); !sameWithinCent(got, want) {
		t.Errorf("through cloudsim:\n  %s\nfrom the file:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if len(live.Held) == 0 || string(live.Held) == "null" {
		t.Error("the report through cloudsim has no commitmentsHeld section")
	}
	covered := map[string]bool{}
	partly := 0
	for _, x := range file.Instances {
		if x.CoveredShare >= 1 {
			covered[x.ResourceID] = true
		}
		if x.CoveredShare > 0 {
			partly++
		}
	}
	if partly == 0 {
		t.Fatal("no instance of the fixture is covered: not the fleet this test is about")
	}
	for _, x := range append(live.Recommendations, file.Recommendations...) {
		if covered[x.ResourceID] && x.Kind != "tagging" && strings.Trim(string(x.MonthlySavings), "0.") != "" {
			t.Errorf("%s (%s) saves %s on %s, whose hours commitments cover in full", x.ID, x.Kind, x.MonthlySavings, x.ResourceID)
		}
	}
}

// money finds the amounts in a line.
var money = regexp.MustCompile(`-?\d+\.\d+`)

// sameWithinCent reports whether two sets of lines are the same but for
// amounts a cent apart.
func sameWithinCent(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if money.ReplaceAllString(a[i], "#") != money.ReplaceAllString(b[i], "#") {
			return false
		}
		x, y := money.FindAllString(a[i], -1), money.FindAllString(b[i], -1)
		for j := range x {
			dx, _ := decimal.NewFromString(x[j])
			dy, _ := decimal.NewFromString(y[j])
			if dx.Sub(dy).Abs().GreaterThan(decimal.New(1, -2)) {
				return false
			}
		}
	}
	return true
}
