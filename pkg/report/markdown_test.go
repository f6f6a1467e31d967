package report

import (
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/internal/fleetgen"
	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
)

// generatedReport runs the engine on a generated fleet of n instances.
func generatedReport(t testing.TB, n int) *Report {
	t.Helper()
	plan, meta := generatedPlan(t, n)
	return New(plan, meta)
}

// generatedPlan is the engine's plan for a generated fleet of n instances,
// and the meta generatedReport gives it.
func generatedPlan(t testing.TB, n int) (recommend.Plan, Meta) {
	t.Helper()
	fl := fleetgen.Generate(fleetgen.Options{Instances: n, Seed: 15, SampleShare: 0.2, MaxSamples: 48})
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(fl, cat); err != nil {
		t.Fatal(err)
	}
	plan := recommend.Run(fl, cat, recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	return plan, Meta{GeneratedAt: testutil.FixedNow, ToolVersion: "1.2.3", FleetName: fl.Metadata.Name,
		FleetSource: "generated.json", Catalog: cat.Sources()}
}

// A 1,000-instance fleet's markdown is its summary, which fits a pull-request
// comment and says where the whole report is; asked for, the summary links
// the artifact given.
func TestMarkdownSummaryOfALargeFleet(t *testing.T) {
	r := generatedReport(t, 1000)
	if len(r.Recommendations) < 200 {
		t.Fatalf("only %d recommendations: the fleet does not test the limit", len(r.Recommendations))
	}
	full, _ := markdownFull(r, 0)
	if len(full) <= MarkdownLimit {
		t.Fatalf("the whole report is %d characters, within the limit: nothing to summarize", len(full))
	}
	if text, over := markdownFull(r, MarkdownLimit); !over || len(text) > MarkdownLimit {
		t.Errorf("capped at the limit: %d characters, over %v", len(text), over)
	}
	auto := write(t, r, "markdown", PrintOptions{})
	t.Logf("%d recommendations, %d warnings: whole %d characters, summary %d", len(r.Recommendations), len(r.Warnings), len(full), len(auto))
	if len(auto) >= MarkdownLimit {
		t.Errorf("summary of %d characters", len(auto))
	}
	for _, want := range []string{"## GPU cost report:", "| Strategy | Recommendations | Savings/mo |",
		"### Top 10 by saving", "more recommendations in the full report.", "This is a summary: the whole report is over 60,000 characters",
		"**Full report:** not attached; write it with `gpufinops analyze -o html`"} {
		if !strings.Contains(auto, want) {
			t.Errorf("summary lacks %q:\n%s", want, auto)
		}
	}
	linked := write(t, r, "markdown", PrintOptions{MarkdownSummary: true, FullReport: "https://ci.example.com/run/7/artifacts/report.html", Top: 25})
	for _, want := range []string{"**Full report:** <https://ci.example.com/run/7/artifacts/report.html>", "### Top 25 by saving"} {
		if !strings.Contains(linked, want) {
			t.Errorf("summary lacks %q:\n%s", want, linked)
		}
	}
	if strings.Contains(linked, "This is a summary: the whole report is over") {
		t.Error("an asked-for summary says the report was too long")
	}
	if len(linked) >= MarkdownLimit {
		t.Errorf("summary of %d characters", len(linked))
	}
}

// The top recommendations are the largest savings, in order, with their
// short actions; a path is named as code.
func TestMarkdownSummaryTop(t *testing.T) {
	r := testReport()
	out := write(t, r, "markdown", PrintOptions{MarkdownSummary: true, FullReport: "artifacts/report.md", Top: 3})
	testutil.AssertGolden(t, "testdata/report_summary.md", []byte(out))
	var savings []string
	for _, l := range strings.Split(out[strings.Index(out, "### Top 3"):], "\n") {
		if f := strings.Split(l, " | "); len(f) == 5 && strings.HasPrefix(f[3], "$") {
			savings = append(savings, f[3])
		}
	}
	if len(savings) != 3 || savings[0] != "$12,284.15" {
		t.Errorf("top savings %v", savings)
	}
	if !strings.Contains(out, "**Full report:** `artifacts/report.md`") {
		t.Errorf("no path:\n%s", out)
	}
}

// The whole report folds each strategy under <details>.
func TestMarkdownFullFolds(t *testing.T) {
	r := testReport()
	out := write(t, r, "markdown", PrintOptions{})
	if n, want := strings.Count(out, "<details><summary><strong>"), len(sections(r)); n != want {
		t.Errorf("%d folds for %d strategies", n, want)
	}
	if strings.Count(out, "<details>") != strings.Count(out, "</details>") {
		t.Error("unbalanced <details>")
	}
}
