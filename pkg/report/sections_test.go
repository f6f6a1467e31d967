package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/gpufinops/gpufinops/internal/purchasetest"
	"github.com/gpufinops/gpufinops/pkg/recommend"
	"github.com/gpufinops/gpufinops/pkg/sharing"
	"github.com/gpufinops/gpufinops/pkg/testutil"
	"github.com/gpufinops/gpufinops/pricing"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/file"
)

// demoReport runs the engine on the embedded demo fleet and catalog.
func demoReport(t *testing.T) *Report {
	t.Helper()
	fl, err := file.Demo()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if err := pricing.Complete(fl, cat); err != nil {
		t.Fatal(err)
	}
	plan := recommend.Run(fl, cat, recommend.DefaultPolicy().WithPurchases(purchasetest.Purchases()))
	return New(plan, Meta{GeneratedAt: testutil.FixedNow, ToolVersion: "1.2.3", FleetName: fl.Metadata.Name,
		FleetSource: SourceDemo, Catalog: cat.Sources()})
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := jsonschema.NewCompiler().Compile("../../docs/schema/report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func validateDoc(t *testing.T, sch *jsonschema.Schema, doc string) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(inst)
}

// The engine's real report on the demo fleet adds up, matches the schema and
// reads back the same, with every 1.1 section filled.
func TestDemoReport(t *testing.T) {
	r := demoReport(t)
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	doc := write(t, r, "json", PrintOptions{})
	if err := validateDoc(t, compileSchema(t), doc); err != nil {
		t.Errorf("the demo report does not match the schema: %v", err)
	}
	back, err := Load(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := back.Verify(); err != nil {
		t.Error(err)
	}
	if again := write(t, back, "json", PrintOptions{}); again != doc {
		t.Errorf("loaded demo report writes differently:\n%s", cmp.Diff(doc, again))
	}

	kinds := map[string]bool{}
	for _, rec := range r.Recommendations {
		kinds[rec.Kind] = true
	}
	for _, k := range []recommend.Kind{recommend.KindQuantize, recommend.KindShare, recommend.KindTagging} {
		if !kinds[string(k)] {
			t.Errorf("no %s recommendation in the demo", k)
		}
	}
	if len(r.Allocation.ByTeam) == 0 || len(r.AIMetrics.Instances) != r.Summary.InstanceCount ||
		len(r.AIMetrics.TrainingRuns) == 0 || len(r.TagAudit.Violations) == 0 ||
		len(r.Sharing.Groups) == 0 || len(r.Commitments.Groups) == 0 {
		t.Errorf("a 1.1 section is empty: allocation %d teams, metrics %d instances %d runs, %d violations, %d sharing groups, %d commitment groups",
			len(r.Allocation.ByTeam), len(r.AIMetrics.Instances), len(r.AIMetrics.TrainingRuns), len(r.TagAudit.Violations),
			len(r.Sharing.Groups), len(r.Commitments.Groups))
	}
	for _, f := range Formats {
		for _, tty := range []bool{true, false} {
			write(t, r, f, PrintOptions{TTY: tty})
		}
	}
}

// Money in the sharing and commitment sections is JSON numbers, although the
// engine's plans write decimals as strings; the curves stay out.
func TestSectionsJSON(t *testing.T) {
	out := write(t, testReport(), "json", PrintOptions{})
	for _, want := range []string{
		`"freedMonthlyCost": 114.14`, `"commitHourly": 0.85362`, `"committedMonthlyCost": 392.58`,
		`"recommendedMonthlySavings": 644.66`, `"costPerMillionTokens": 3.1395`, `"untaggedMonthlyCost": 228.28`,
		`"key": "(untagged)"`, `"runCost": 11755.16`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("json lacks %s", want)
		}
	}
	for _, unwanted := range []string{`"hourlyUsage"`, `"curve"`, `"allocations"`, `"moves"`, `"violations": [{"kind"`, `"114.14"`} {
		if strings.Contains(out, unwanted) {
			t.Errorf("json has %s", unwanted)
		}
	}
}

func TestNewSharingMIG(t *testing.T) {
	plan := testPlan()
	plan.Sharing.Groups = append(plan.Sharing.Groups, sharing.Group{
		Mode: sharing.MIG, Provider: "aws", Region: "us-east-1", InstanceType: "p4d.24xlarge", GPUModel: "A100",
		Hosts: []sharing.Host{{InstanceID: "h1", Tenants: []string{"h1", "t1"}, MIGDevices: map[string]int{"3g.40gb": 2}}},
		Freed: []string{"t1"}, FreedMonthly: dec("10.005"),
	})
	r := New(plan, testMeta())
	g := r.Sharing.Groups[1]
	if g.Mode != "mig" || g.Replicas != 0 || g.Hosts[0].MIGDevices["3g.40gb"] != 2 || g.FreedMonthlyCost.String() != "10.01" {
		t.Errorf("got %+v", g)
	}
	plan.Sharing.Groups[1].Hosts[0].MIGDevices["3g.40gb"] = 7
	if r.Sharing.Groups[1].Hosts[0].MIGDevices["3g.40gb"] != 2 {
		t.Error("the report shares a map with the plan")
	}
}

func TestSchemaSections(t *testing.T) {
	sch := compileSchema(t)
	good := write(t, testReport(), "json", PrintOptions{})
	// Fields added in 1.1 are optional: a 1.0 report still matches.
	if err := validateDoc(t, sch, report10(t, good)); err != nil {
		t.Errorf("a 1.0 report does not match the schema: %v", err)
	}
	for name, mutate := range map[string]func(doc map[string]any){
		"sharing money as string": func(doc map[string]any) { doc["sharing"].(map[string]any)["freedMonthlyCost"] = "114.14" },
		"unknown sharing mode": func(doc map[string]any) {
			doc["sharing"].(map[string]any)["groups"].([]any)[0].(map[string]any)["mode"] = "mps"
		},
		"unknown term": func(doc map[string]any) {
			doc["commitments"].(map[string]any)["groups"].([]any)[0].(map[string]any)["recommendedTerm"] = "5y"
		},
		"bucket without key": func(doc map[string]any) {
			delete(doc["allocation"].(map[string]any)["byTeam"].([]any)[0].(map[string]any), "key")
		},
		"tag kind": func(doc map[string]any) { item(doc, "recommendations", 0)["kind"] = "tags" },
	} {
		var doc map[string]any
		if err := json.Unmarshal([]byte(good), &doc); err != nil {
			t.Fatal(err)
		}
		mutate(doc)
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := validateDoc(t, sch, string(b)); err == nil {
			t.Errorf("%s: the schema accepts it", name)
		}
	}
}
