package reportdiff

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/gpufinops/gpufinops/pkg/report"
	"github.com/gpufinops/gpufinops/pkg/testutil"
)

func load(t *testing.T, path string) *report.Report {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := report.Load(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

func testDiff(t *testing.T) *Diff {
	t.Helper()
	d, err := Compare(load(t, "testdata/old.json"), load(t, "testdata/new.json"), "old.json", "new.json")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestWriteGolden(t *testing.T) {
	d := testDiff(t)
	for _, tc := range []struct {
		golden, format string
		tty            bool
	}{
		{"diff_tty.golden", "table", true},
		{"diff_pipe.golden", "table", false},
		{"diff.json", "json", false},
		{"diff.md", "markdown", false},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, d, tc.format, PrintOptions{TTY: tc.tty}); err != nil {
				t.Fatal(err)
			}
			testutil.AssertGolden(t, "testdata/"+tc.golden, b.Bytes())
		})
	}
}

func TestCompare(t *testing.T) {
	d := testDiff(t)
	if got := d.Summary.MonthlySavings.Change.String(); got != "70708.29" {
		t.Errorf("savings change %s, want 70708.29", got)
	}
	if got := d.Summary.CurrentMonthlyCost.Change.String(); got != "70663.87" {
		t.Errorf("current cost change %s, want 70663.87", got)
	}
	ids := func(xs []Instance) (out []string) {
		for _, x := range xs {
			out = append(out, x.ResourceID)
		}
		return out
	}
	if got := strings.Join(ids(d.Instances.Added), ","); got != "nd-h100-eval" {
		t.Errorf("added %s", got)
	}
	if got := strings.Join(ids(d.Instances.Removed), ","); got != "infer-g5-5" {
		t.Errorf("removed %s", got)
	}
	var changed []string
	for _, c := range d.Instances.Changed {
		for _, f := range c.Fields {
			changed = append(changed, c.ResourceID+":"+f.Field+":"+f.Old+"->"+f.New)
		}
	}
	want := "hpo-g5-1:lifecycle:spot->on-demand infer-g5-1:instanceType:g5.4xlarge->g5.2xlarge"
	if got := strings.Join(changed, " "); got != want {
		t.Errorf("changed %s, want %s", got, want)
	}
	// A recommendation's saving delta is new minus old.
	for _, c := range d.Recommendations.Changed {
		m := c.MonthlySavings
		if !m.New.Decimal().Sub(m.Old.Decimal()).Equal(m.Change.Decimal()) {
			t.Errorf("%s: change %s is not %s - %s", c.ID, m.Change, m.New, m.Old)
		}
	}
}

func TestCompareSameReport(t *testing.T) {
	r := load(t, "testdata/new.json")
	d, err := Compare(r, r, "a.json", "a.json")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(d.Instances.Added) + len(d.Instances.Removed) + len(d.Instances.Changed) +
		len(d.Recommendations.New) + len(d.Recommendations.Resolved) + len(d.Recommendations.Changed); n != 0 {
		t.Errorf("a report compared with itself has %d changes", n)
	}
	if !d.Summary.MonthlySavings.Change.Decimal().IsZero() {
		t.Errorf("savings change %s", d.Summary.MonthlySavings.Change)
	}
	var b bytes.Buffer
	if err := Write(&b, d, "markdown", PrintOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<details>") {
		t.Errorf("no changes, yet details:\n%s", b.String())
	}
}

func TestCompareCurrencies(t *testing.T) {
	a, b := load(t, "testdata/old.json"), load(t, "testdata/new.json")
	b.Currency = "EUR"
	_, err := Compare(a, b, "a.json", "b.json")
	if err == nil || err.Error() != "a.json is in USD and b.json in EUR: compare reports in one currency" {
		t.Errorf("error %v", err)
	}
}

func TestSchemaValidatesDiff(t *testing.T) {
	schema, err := JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaID, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(SchemaID)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, testDiff(t), "json", PrintOptions{}); err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("diff does not match its schema: %v", err)
	}
	var v map[string]any
	_ = json.Unmarshal(b.Bytes(), &v)
	if v["diffVersion"] != Version {
		t.Errorf("diffVersion %v", v["diffVersion"])
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	err := Write(&bytes.Buffer{}, testDiff(t), "yaml", PrintOptions{})
	if err == nil || !strings.Contains(err.Error(), `unknown output format "yaml"`) {
		t.Errorf("error %v", err)
	}
}
