package analyze

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// TestGCPAttachedGPUsArePriced: a GCP N1 machine with attached GPUs, as a
// fleet file or a scan gives it (the machine type and its GPUs), is priced
// as its host and GPUs together, with no unknown-type warning, for every
// N1 size and GPU the catalog prices in a region; a GPU count Google does
// not offer on that size stays unknown and is said so.
func TestGCPAttachedGPUsArePriced(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		host, model string
		count       float64
		monthly     decimal.Decimal
	}
	var cases []want
	seen := map[string]bool{}
	for _, o := range cat.Offers(pricing.Query{Provider: fleet.GCP, Region: "us-central1"}) {
		host, model, count, ok := pricing.ParseAttachedTypeName(o.Type.Name)
		if !ok || o.OnDemand == nil || seen[model] {
			continue
		}
		// One size per GPU model keeps the test quick; reports carry cents.
		seen[model] = true
		cases = append(cases, want{host, model, count, o.OnDemand.Hourly.Mul(decimal.NewFromInt(730)).Round(2)})
	}
	if len(cases) < 3 {
		t.Fatalf("the catalog prices %d N1 + GPU combinations in us-central1; want T4, V100, P100, P4", len(cases))
	}
	var b strings.Builder
	b.WriteString("apiVersion: gpufinops/v1\nkind: Fleet\nmetadata:\n  name: n1\n  generatedAt: \"2026-12-01T00:00:00Z\"\ninstances:\n")
	for i, c := range cases {
		fmt.Fprintf(&b, "  - id: n1-%d\n    provider: gcp\n    account: proj-a\n    region: us-central1\n    instanceType: %s\n    gpu: {model: %s, count: %v}\n    lifecycle: on-demand\n    state: running\n    utilization:\n      window: {start: \"2026-11-23T00:00:00Z\", end: \"2026-11-30T00:00:00Z\"}\n      gpu: {avg: 60, p95: 80, max: 90}\n",
			i, c.host, c.model, c.count)
	}
	// A count no N1 size takes: kept, unpriced, named in a warning.
	b.WriteString("  - id: n1-odd\n    provider: gcp\n    account: proj-a\n    region: us-central1\n    instanceType: n1-standard-8\n    gpu: {model: T4, count: 3}\n    lifecycle: on-demand\n    state: running\n")
	path := filepath.Join(t.TempDir(), "n1.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err, code := runAnalyze(t, nil, false, "--fleet", path, "-o", "json")
	if code != cmdutil.ExitPartial {
		t.Fatalf("exit %d (%v), want %d for the one unknown combination", code, err, cmdutil.ExitPartial)
	}
	var rep struct {
		Instances []struct {
			ID                 string           `json:"resourceId"`
			CurrentMonthlyCost *decimal.Decimal `json:"currentMonthlyCost"`
		} `json:"instances"`
		Warnings []struct {
			Code   string `json:"code"`
			Reason string `json:"reason"`
		} `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	cost := map[string]*decimal.Decimal{}
	for _, in := range rep.Instances {
		cost[in.ID] = in.CurrentMonthlyCost
	}
	for i, c := range cases {
		id := fmt.Sprintf("n1-%d", i)
		if got := cost[id]; got == nil || !got.Equal(c.monthly) {
			t.Errorf("%s (%s + %v × %s): monthly cost %v, want %s", id, c.host, c.count, c.model, got, c.monthly)
		}
	}
	var unknown []string
	for _, w := range rep.Warnings {
		if w.Code == string(fleet.ScanUnknownType) {
			unknown = append(unknown, w.Reason)
		}
	}
	if len(unknown) != 1 || !strings.Contains(unknown[0], "n1-standard-8") || !strings.Contains(unknown[0], "price") {
		t.Errorf("unknown-type warnings %q, want one for n1-standard-8 with 3 T4s, missing its price", unknown)
	}
	if got, ok := cost["n1-odd"]; !ok || got != nil {
		t.Errorf("n1-odd: cost %v (present %v), want present and unpriced", got, ok)
	}
}
