package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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

// estateReport is what the committed-estate tests read of `analyze -o json`.
type estateReport struct {
	Summary struct {
		Current json.RawMessage `json:"currentMonthlyCost"`
		Savings json.RawMessage `json:"monthlySavings"`
		Unused  json.RawMessage `json:"unusedCommitmentMonthlyCost"`
	} `json:"summary"`
	Recommendations []struct {
		ID             string          `json:"id"`
		ResourceID     string          `json:"resourceId"`
		Kind           string          `json:"kind"`
		MonthlySavings json.RawMessage `json:"monthlySavings"`
	} `json:"recommendations"`
	Instances []struct {
		ResourceID            string          `json:"resourceId"`
		CoveredShare          float64         `json:"coveredShare"`
		CoveredBy             []string        `json:"coveredBy"`
		CommitmentMonthlyCost json.RawMessage `json:"commitmentMonthlyCost"`
		CurrentMonthlyCost    json.RawMessage `json:"currentMonthlyCost"`
		MonthlySavings        json.RawMessage `json:"monthlySavings"`
	} `json:"instances"`
	Held json.RawMessage `json:"commitmentsHeld"`
}

// analyzeEstate runs `analyze -o json` with args and decodes the report.
func analyzeEstate(t *testing.T, args ...string) (estateReport, string) {
	t.Helper()
	code, out, stderr := gpufinops(t, append([]string{"analyze", "-o", "json"}, args...)...)
	if code != cmdutil.ExitOK && code != cmdutil.ExitPartial {
		t.Fatalf("analyze %v exited %d: %s", args, code, stderr)
	}
	var r estateReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("analyze %v: no report: %v", args, err)
	}
	return r, stderr
}

// lines are the report's totals, recommendations and instance costs and
// coverage, one line each, sorted.
func (r estateReport) lines() []string {
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

// TestCommittedEstateAnalyzeMatchesFile (issue 33, "Done when"): on a fleet
// with reserved instances, savings plans, Azure reservations and GCP CUDs,
// `analyze --provider aws,azure,gcp` through cloudsim gives the same
// recommendations, instance costs, commitment coverage and totals as
// `analyze --fleet` on the same file, and no recommendation saves on an
// instance whose hours the commitments cover in full.
func TestCommittedEstateAnalyzeMatchesFile(t *testing.T) {
	path, f := commitmentsFile(t)
	serveAllClouds(t, f, nil)
	run := func(args ...string) (estateReport, string) { return analyzeEstate(t, args...) }
	lines := estateReport.lines
	live, _ := run("--provider", "aws,azure,gcp")
	file, _ := run("--fleet", path)
	// Exactly: offline the catalog derives GCP's per-unit vCPU, memory and
	// GPU prices from the machine prices as the simulator's SKUs are
	// (catalog.GCPUnitRates), so a resource CUD's share of a machine is
	// split by the same prices on both sides.
	if got, want := lines(live), lines(file); strings.Join(got, "\n") != strings.Join(want, "\n") {
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

// resourceCUDFleet is a GCP fleet in europe-west4 with a resource-based
// CUD of vCPUs and memory only (no GPUs) over its g2 machines: a busy
// g2-standard-48, a busy and an idle g2-standard-4 (56 vCPUs, 224 GiB, 6
// L4s; the CUD buys the 56 vCPUs and 224 GiB), and a busy a2-highgpu-1g the
// g2 CUD does not cover.
const resourceCUDFleet = `apiVersion: gpufinops/v1
kind: Fleet
metadata:
  name: gcp-resource-cud
  generatedAt: "2026-11-30T00:00:00Z"
instances:
%s
commitments:
  - id: https://www.googleapis.com/compute/v1/projects/ml-research-eu/regions/europe-west4/commitments/cud-g2-host-1y
    provider: gcp
    account: ml-research-eu
    kind: resource-cud
    instanceFamily: g2
    scope: {level: region, region: europe-west4}
    term: 1y
    payment: monthly
    start: "2026-01-01T00:00:00Z"
    end: "2027-01-01T00:00:00Z"
    resources:
      - {type: vcpu, amount: 56}
      - {type: memory, amount: 224}
`

const resourceCUDInstance = `  - id: %s
    provider: gcp
    account: ml-research-eu
    region: europe-west4
    zone: europe-west4-%s
    instanceType: %s
    lifecycle: on-demand
    state: running
    launchTime: "2026-02-01T00:00:00Z"
    utilization:
      window: {start: "2026-11-23T00:00:00Z", end: "2026-11-30T00:00:00Z"}
      gpu: {avg: %d, p95: %d, max: %d}
      gpuMemory: {avg: %d, p95: %d, max: %d}
      cpu: {avg: %d, p95: %d, max: %d}
`

// TestResourceCUDSplitByUnitPrice (issue 33): on resourceCUDFleet,
// `analyze --fleet` and `analyze --provider gcp` through the GCP simulator
// give the same recommendations, covered shares and totals, to the cent:
// the catalog derives the per-unit vCPU, memory and L4 prices offline as
// the simulator's Billing Catalog SKUs are. The CUD covers the idle
// g2-standard-4's vCPUs and memory, not its L4, so stopping it saves the
// L4's on-demand share, 730 h × the L4's unit price, and it is covered in
// part (its vCPUs' and memory's share of its price), not in full with no
// saving (the scarcest committed resource's share, as the file said when
// it had no unit prices).
func TestResourceCUDSplitByUnitPrice(t *testing.T) {
	var ins []string
	for _, m := range []struct {
		id, zone, typ string
		busy          bool
	}{{"g2-48-busy", "a", "g2-standard-48", true}, {"g2-4-busy", "b", "g2-standard-4", true}, {"g2-4-idle", "b", "g2-standard-4", false}, {"a2-1g-busy", "a", "a2-highgpu-1g", true}} {
		u := []any{m.id, m.zone, m.typ, 1, 2, 3, 2, 3, 4, 2, 3, 5}
		if m.busy {
			u = []any{m.id, m.zone, m.typ, 72, 95, 100, 60, 80, 88, 30, 55, 70}
		}
		ins = append(ins, fmt.Sprintf(resourceCUDInstance, u...))
	}
	path := filepath.Join(t.TempDir(), "gcp-resource-cud.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(resourceCUDFleet, strings.Join(ins, ""))), 0o644); err != nil {
		t.Fatal(err)
	}
	f := providertest.ReadFleet(t, path)
	serveAllClouds(t, f, nil)
	live, _ := analyzeEstate(t, "--provider", "gcp")
	file, _ := analyzeEstate(t, "--fleet", path)
	if got, want := live.lines(), file.lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("through cloudsim:\n  %s\nfrom the file:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	l4, ok := pricing.LookupResource(cat, pricing.ResourceQuery{Provider: fleet.GCP, Region: "europe-west4", Resource: pricing.ResourceGPU, Name: "L4", Option: pricing.OnDemand})
	if !ok {
		t.Fatal("the catalog has no L4 unit price in europe-west4")
	}
	want := l4.Hourly.Mul(decimal.NewFromInt(730)).Round(2)
	for _, r := range []estateReport{live, file} {
		stops := 0
		for _, x := range r.Recommendations {
			if x.ResourceID != "g2-4-idle" || x.Kind != "idle-stop" {
				continue
			}
			stops++
			if got, err := decimal.NewFromString(strings.Trim(string(x.MonthlySavings), `"`)); err != nil || !got.Equal(want) {
				t.Errorf("%s saves %s a month; want the L4's share, 730 h × $%s = %s", x.ID, x.MonthlySavings, l4.Hourly, want)
			}
		}
		if stops != 1 {
			t.Errorf("%d idle-stop recommendations for g2-4-idle, want 1", stops)
		}
		for _, x := range r.Instances {
			switch x.ResourceID {
			case "g2-4-idle", "g2-4-busy", "g2-48-busy":
				if !(x.CoveredShare > 0.1 && x.CoveredShare < 0.5) {
					t.Errorf("%s: covered %.4f; want its vCPUs' and memory's share of its price", x.ResourceID, x.CoveredShare)
				}
			case "a2-1g-busy":
				if x.CoveredShare != 0 {
					t.Errorf("%s: covered %.4f by a g2 CUD", x.ResourceID, x.CoveredShare)
				}
			}
		}
	}
}
