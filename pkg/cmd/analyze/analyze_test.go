package analyze

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/cmd/factory"
	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/cmdutil/cmdtest"
	"github.com/gpufinops/gpufinops/pkg/config"
	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/report"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/file"
)

func TestNewCmdAnalyze(t *testing.T) {
	for _, tc := range []struct {
		args    string
		want    AnalyzeOptions
		wantErr string
	}{
		{args: "--demo", want: AnalyzeOptions{Input: cmdutil.FleetFlags{Demo: true}, Format: "table"}},
		{args: "--fleet f.yaml -o json", want: AnalyzeOptions{Input: cmdutil.FleetFlags{Path: "f.yaml"}, Format: "json"}},
		{args: "-f - -o markdown --idle-threshold 10 --commitment-term 3y", want: AnalyzeOptions{Input: cmdutil.FleetFlags{Path: "-"}, Format: "markdown"}},
		{args: "", wantErr: "give a fleet: --fleet FILE, --demo or --provider aws"},
		{args: "--demo --idle-threshold 101", wantErr: "--idle-threshold: 101 is outside 0–100"},
		{args: "--demo --commitment-term 2y", wantErr: `--commitment-term: "2y" is not 1y or 3y`},
		{args: "--demo -o yaml", wantErr: `"yaml" is not one of table, wide, json, csv, markdown, html, focus`},
		{args: "--demo extra", wantErr: `unknown command "extra"`},
	} {
		t.Run(tc.args, func(t *testing.T) {
			got, err := cmdtest.Parse(t, NewCmdAnalyze, strings.Fields(tc.args))
			if cmdtest.CheckErr(t, err, tc.wantErr) {
				return
			}
			if (got.Input.Path != tc.want.Input.Path || got.Input.Demo != tc.want.Input.Demo) || got.Format != tc.want.Format {
				t.Errorf("got input %+v format %q", got.Input, got.Format)
			}
			if strings.Contains(tc.args, "--idle-threshold") && (got.IdleThreshold == nil || *got.IdleThreshold != 10 || *got.CommitmentTerm != "3y") {
				t.Errorf("policy flags not set: %+v", got)
			}
			if !strings.Contains(tc.args, "--idle-threshold") && (got.IdleThreshold != nil || got.CommitmentTerm != nil) {
				t.Errorf("policy flags set without being given: %+v", got)
			}
		})
	}
}

// demoOptions runs against the real embedded catalog and demo fleet.
func demoOptions(t *testing.T, format string, tty bool) (*AnalyzeOptions, *bytes.Buffer) {
	t.Helper()
	ios, _, out, _ := iostreams.Test()
	ios.SetStdoutTTY(tty)
	return &AnalyzeOptions{
		IO: ios,
		Config: func() (*config.Config, error) {
			return &config.Config{Policy: recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases())}, nil
		},
		Catalog: catalog.Embedded,
		Fleet:   factory.FileFleet(ios),
		Now:     testutil.Now,
		Input:   cmdutil.FleetFlags{Demo: true},
		Format:  format,
	}, out
}

func TestAnalyzeRunDemoGolden(t *testing.T) {
	for _, tc := range []struct {
		name, format string
		tty          bool
	}{
		{"table-tty", "table", true},
		{"table", "table", false},
		{"wide-tty", "wide", true},
		{"json", "json", false},
		{"csv", "csv", false},
		{"markdown", "markdown", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, out := demoOptions(t, tc.format, tc.tty)
			if err := analyzeRun(opts); err != nil {
				t.Fatal(err)
			}
			ext := map[string]string{"json": ".json", "csv": ".csv", "markdown": ".md"}[tc.format]
			if ext == "" {
				ext = ".txt"
			}
			testutil.AssertGolden(t, "testdata/demo-"+tc.name+ext, out.Bytes())
		})
	}
}

// TestDemoReport checks the demo's figures against hand computation from the
// catalog prices, and that the report adds up.
func TestDemoReport(t *testing.T) {
	opts, out := demoOptions(t, "json", false)
	if err := analyzeRun(opts); err != nil {
		t.Fatal(err)
	}
	rep, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Verify(); err != nil {
		t.Fatal(err)
	}
	// 27 items: 23 VMs and 4 managed AI items. The four warnings: no
	// SageMaker Savings Plans rate in the catalog (no commitment for the
	// SageMaker items); the spot advisor's data (2025-06-28) and the GCP
	// Billing Catalog's spot prices (2026-07-30) are past the 90-day spot
	// age limit on the demo's date; the Vertex AI prediction SKUs
	// (2025-08-16) are past the 365-day list age limit.
	codes := make([]string, 0, len(rep.Warnings))
	for _, w := range rep.Warnings {
		codes = append(codes, string(w.Code))
	}
	if rep.Summary.InstanceCount != 27 || rep.Summary.GPUCount != 57 || rep.Summary.UnpricedCount != 0 ||
		strings.Join(codes, " ") != "no-commitment-rate stale-price stale-price stale-price" {
		t.Errorf("summary %+v, warnings %v", rep.Summary, rep.Warnings)
	}
	recs := map[string]report.Recommendation{}
	kinds := map[string]bool{}
	providers := map[string]bool{}
	for _, r := range rep.Recommendations {
		recs[r.ID] = r
		kinds[r.Kind] = true
		providers[r.Provider] = true
	}
	for _, k := range []string{"idle-stop", "schedule", "rightsize", "spot", "commitment"} {
		if !kinds[k] {
			t.Errorf("no %s recommendation in the demo", k)
		}
	}
	for _, p := range []string{"aws", "azure", "gcp"} {
		if !providers[p] {
			t.Errorf("no recommendation for %s in the demo", p)
		}
	}
	for _, tc := range []struct {
		id, current, projected string
	}{
		// Azure ND96isr H100 v5, eastus: 98.32 $/h × 730 h, stopped.
		{"idle-stop:nd-h100-eval", "71773.60", "0.00"},
		// g5.2xlarge 1.212 $/h × 730 → g5.xlarge 1.006 $/h × 730.
		{"rightsize:infer-g5-1", "884.76", "734.38"},
		// The g5 family's two kept replicas commit 2 × 1.006 = 2.012 $/h at the
		// catalog's 1-year Compute Savings Plan rate for g5.xlarge in us-east-1
		// (Convertible RI no upfront, 21.25 % off): saving 2.012 × 730 −
		// round(2.012 × 0.7875 × 730) = 1468.76 − 1156.65 = 312.11, split
		// 156.06 + 156.05 (the odd cent to the first by ID).
		{"commitment:infer-g5-1", "734.38", "578.33"},
		// g4dn.xlarge 0.526 $/h × 730 → Mon–Fri 08:00–18:00 = 50 h/week × 730/168.
		{"schedule:nb-g4dn-1", "383.98", "114.28"},
		// GCP a2-highgpu-1g us-central1: host 0.73948 + A100 2.93391 = 3.67339 $/h × 730,
		// spot host 0.36975 + A100 1.4341 = 1.80385 $/h × 730.
		// × 1.015338: Young/Daly checkpoint overhead (5 min writes, 1 interruption a month assumed on GCP).
		{"spot:gcp-a100-train", "2681.57", "1429.04"},
		// g2-standard-8 (0.29358 + L4 0.56004) → g2-standard-4 (0.14679 + 0.56004), × 730.
		{"rightsize:gcp-l4-infer", "623.15", "515.99"},
		// SageMaker ml.g5.12xlarge 7.09 $/h × 2 replicas × 730 h, no request in 7 days: deleted.
		{"idle-stop:arn:aws:sagemaker:us-east-1:111122223333:endpoint/summarizer-demo/variant/AllTraffic", "10351.40", "0.00"},
		// Vertex AI endpoint (staging), 3 replicas × (H100 11.2660332 + 26 vCPU × 0.0293227 +
		// 234 GiB × 0.0025534 = 12.625919 $/h) × 730, GPU p95 12 % against the 50 % target:
		// ceil(3 × 12 / 50) = 1 replica.
		{"rightsize:" + "projects/ml-platform-prod/locations/us-central1/endpoints/6120004417/deployedModels/3301", "27650.76", "9216.92"},
		// SageMaker notebook ml.g5.xlarge 1.4084 $/h × 730, busy on weekdays: idle shutdown after 60
		// minutes saves its idle runs beyond the delay, 117 of 168 sampled hours.
		{"schedule:arn:aws:sagemaker:us-east-1:111122223333:notebook-instance/nb-dana", "1028.13", "312.11"},
		// Azure ML compute instance on Standard_NC24ads_A100_v4, 3.673 $/h × 730 (the VM price), GPU p95 1 %: stopped.
		{"idle-stop:/subscriptions/0b1f6471-1bf0-4dda-aec3-cb9272f09590/resourceGroups/nlp-ml/providers/Microsoft.MachineLearningServices/workspaces/ws-nlp/computes/ci-erin", "2681.29", "0.00"},
	} {
		r, ok := recs[tc.id]
		if !ok {
			t.Errorf("missing %s", tc.id)
			continue
		}
		if r.CurrentMonthlyCost.String() != tc.current || r.ProjectedMonthlyCost.String() != tc.projected {
			t.Errorf("%s: %s → %s, want %s → %s", tc.id, r.CurrentMonthlyCost, r.ProjectedMonthlyCost, tc.current, tc.projected)
		}
	}
	if r := recs["spot:hpo-g5-4"]; r.Risk != "high" {
		t.Errorf("hpo-g5-4 does not checkpoint: spot risk %q, want high", r.Risk)
	}
	if _, ok := recs["commitment:infer-g5-1"]; !ok || recs["commitment:infer-g5-1"].After != "rightsize:infer-g5-1" {
		t.Errorf("commitment must follow the rightsize")
	}
	vertex := "projects/ml-platform-prod/locations/us-central1/endpoints/6120004417/deployedModels/3301"
	for _, id := range []string{"commitment:train-p4d-1", "commitment:nb-g4dn-1", "spot:infer-g5-1", "commitment:" + vertex,
		"commitment:arn:aws:sagemaker:us-east-1:111122223333:notebook-instance/nb-dana"} {
		if _, ok := recs[id]; ok {
			t.Errorf("unexpected %s", id)
		}
	}
	sum := decimal.Zero
	for _, ic := range rep.Instances {
		if ic.CurrentMonthlyCost != nil {
			sum = sum.Add(ic.CurrentMonthlyCost.Decimal())
		}
	}
	if !sum.Equal(rep.Summary.CurrentMonthlyCost.Decimal()) {
		t.Errorf("Σ instances %s ≠ current %s", sum, rep.Summary.CurrentMonthlyCost)
	}
}

// TestInventoryRoundTrip feeds the snapshot `inventory -o json` writes back
// into analyze: the report is the same.
func TestAnalyzeReadsWrittenSnapshot(t *testing.T) {
	demo, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	var snap bytes.Buffer
	if err := fleet.Write(&snap, demo, "json"); err != nil {
		t.Fatal(err)
	}
	opts, out := demoOptions(t, "json", false)
	opts.Input = cmdutil.FleetFlags{Path: "-"}
	opts.IO.In = &snap
	if err := analyzeRun(opts); err != nil {
		t.Fatal(err)
	}
	fromFile := out.String()
	opts, out = demoOptions(t, "json", false)
	if err := analyzeRun(opts); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(out.String(), `"path": "demo"`, `"path": "-"`, 1)
	if fromFile != want {
		t.Error("analyzing the written snapshot differs from analyzing the demo")
	}
}

func TestAnalyzeBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, path, want string
	}{
		{"missing", "testdata/nope.yaml", "nope.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, out := demoOptions(t, "table", false)
			opts.Input = cmdutil.FleetFlags{Path: tc.path}
			err := analyzeRun(opts)
			var inputErr *cmdutil.InputError
			if !errors.As(err, &inputErr) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an input error containing %q", err, tc.want)
			}
			if out.Len() != 0 {
				t.Errorf("wrote output on error: %q", out.String())
			}
		})
	}
}

// A type the catalog lacks is no bad input: the report is written with the
// instance in it, unpriced, a warning names the type and what is missing,
// and the run is partial (exit code 3).
func TestAnalyzeUnknownType(t *testing.T) {
	opts, out := demoOptions(t, "json", false)
	opts.Input = cmdutil.FleetFlags{Path: "testdata/unknown-type.yaml"}
	err := analyzeRun(opts)
	if code := cmdutil.ExitCodeFor(err); code != cmdutil.ExitPartial {
		t.Fatalf("exit code %d (%v), want %d", code, err, cmdutil.ExitPartial)
	}
	for _, want := range []string{`"resourceId": "x-1"`, `"priced": false`, `"code": "unknown-type"`,
		`instance type \"p9.huge\" is not in the catalog; missing: GPU model, GPU count, price`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %s:\n%s", want, out)
		}
	}
}

// BenchmarkAnalyzeDemo measures the whole command on the demo fleet: catalog
// load, fleet parse, engine and table.
func BenchmarkAnalyzeDemo(b *testing.B) {
	for i := 0; i < b.N; i++ {
		ios, _, _, _ := iostreams.Test()
		opts := &AnalyzeOptions{
			IO: ios,
			Config: func() (*config.Config, error) {
				return &config.Config{Policy: recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases())}, nil
			},
			Catalog: func() (pricing.Catalog, error) { return catalog.Embedded() },
			Fleet:   func(string, bool) (*fleet.Fleet, error) { return file.Demo() },
			Now:     testutil.Now,
			Input:   cmdutil.FleetFlags{Demo: true},
			Format:  "table",
		}
		if err := analyzeRun(opts); err != nil {
			b.Fatal(err)
		}
	}
}
