package reportmerge

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpufinops/gpufinops/pkg/cmdutil"
	"github.com/gpufinops/gpufinops/pkg/iostreams"
	"github.com/gpufinops/gpufinops/pkg/testutil"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ios, _, out, _ := iostreams.Test()
	cmd := NewCmdMerge(&cmdutil.Factory{IOStreams: ios}, nil)
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	_, err := cmd.ExecuteC()
	return out.String(), err
}

// part writes the test report marked shard i/n, keeping only its
// instances and recommendations whose index mod n is i-1.
func part(t *testing.T, dir string, i, n int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "report", "testdata", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	r["shard"] = map[string]int{"index": i, "count": n}
	keep := map[string]bool{}
	var ins []any
	for k, in := range r["instances"].([]any) {
		if k%n == i-1 {
			ins = append(ins, in)
			keep[in.(map[string]any)["resourceId"].(string)] = true
		}
	}
	var recs []any
	for _, rec := range r["recommendations"].([]any) {
		if keep[rec.(map[string]any)["resourceId"].(string)] {
			recs = append(recs, rec)
		}
	}
	r["instances"], r["recommendations"] = ins, recs
	r["summary"] = summary(ins, recs)
	for _, k := range []string{"allocation", "sharing", "commitments", "aiMetrics", "tagAudit"} {
		delete(r, k)
	}
	out, _ := json.Marshal(r)
	path := filepath.Join(dir, "part"+string(rune('0'+i))+".json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// summary is a part's summary of its instances and recommendations, as
// analyze writes it (amounts in cents).
func summary(ins, recs []any) map[string]any {
	var current, savings, gpus float64
	unpriced := 0
	byKind := map[string]float64{}
	for _, in := range ins {
		m := in.(map[string]any)
		gpus += m["gpuCount"].(float64)
		if c, ok := m["currentMonthlyCost"].(float64); ok && m["priced"] == true {
			current += c
		} else {
			unpriced++
		}
	}
	for _, rec := range recs {
		m := rec.(map[string]any)
		savings += m["monthlySavings"].(float64)
		byKind[m["kind"].(string)] += m["monthlySavings"].(float64)
	}
	cents := func(v float64) float64 { return math.Round(v*100) / 100 }
	for k, v := range byKind {
		byKind[k] = cents(v)
	}
	pct := 0.0
	if current != 0 {
		pct = math.Round(savings/current*1000) / 10
	}
	return map[string]any{
		"currentMonthlyCost": cents(current), "optimizedMonthlyCost": cents(current - savings), "monthlySavings": cents(savings),
		"savingsPercent": pct, "instanceCount": len(ins), "gpuCount": gpus, "unpricedCount": unpriced, "savingsByKind": byKind,
	}
}

func TestMerge(t *testing.T) {
	dir := t.TempDir()
	a, b := part(t, dir, 1, 2), part(t, dir, 2, 2)
	out, err := run(t, a, b, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Shard   any `json:"shard"`
		Summary struct {
			InstanceCount int `json:"instanceCount"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.Shard != nil || got.Summary.InstanceCount == 0 {
		t.Fatalf("%v %+v", err, got)
	}
	testutil.ValidateJSON(t, "../../../docs/schema/report.schema.json", out)
}

// TestMergeErrors: bad input is exit 2 with the file named.
func TestMergeErrors(t *testing.T) {
	dir := t.TempDir()
	a, b := part(t, dir, 1, 3), part(t, dir, 2, 3)
	junk := filepath.Join(dir, "junk.json")
	_ = os.WriteFile(junk, []byte(`{"apiVersion": "gpufinops/v1", "kind": "Fleet"}`), 0o644)
	// The third part with its summary's saving a cent higher: a part
	// changed after analyze wrote it.
	c := part(t, dir, 3, 3)
	raw, _ := os.ReadFile(c)
	var doc map[string]any
	_ = json.Unmarshal(raw, &doc)
	doc["summary"].(map[string]any)["monthlySavings"] = doc["summary"].(map[string]any)["monthlySavings"].(float64) + 0.01
	tampered := filepath.Join(dir, "tampered.json")
	raw, _ = json.Marshal(doc)
	_ = os.WriteFile(tampered, raw, 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give the partial reports"},
		{[]string{a, b}, "missing shard 3/3"},
		{[]string{a, b, tampered}, tampered + ": report does not add up: summary.monthlySavings"},
		{[]string{a, a, b}, "shard 1/3 is also in"},
		{[]string{a, junk}, junk},
		{[]string{a, filepath.Join(dir, "nope.json")}, "nope.json: cannot read the report"},
	} {
		_, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || cmdutil.ExitCodeFor(err) != cmdutil.ExitUsage {
			t.Errorf("%q: %v (exit %d), want %q and exit 2", tc.args, err, cmdutil.ExitCodeFor(err), tc.want)
		}
	}
}
