package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Warnings group by code in the order they first come, every warning counted
// once; a group of up to three prints each warning, a larger one its count,
// three examples and one message; stale prices merge once per source and
// date, their instances summed, whatever the rate.
func TestGroupWarnings(t *testing.T) {
	stale := func(kind, source string, n int) Warning {
		return Warning{Code: WarnStalePrice, Message: fmt.Sprintf(
			"%s prices from %s as of 2025-11-30 are 371 days old, over the 365-day limit (policy.prices.max_list_age_days); %s priced with them: check current prices before acting",
			kind, source, plural(n, "instance"))}
	}
	var ws []Warning
	for i := range 5 {
		ws = append(ws, Warning{ResourceID: fmt.Sprintf("i-%02d", i), Code: "no-utilization", Message: "no GPU utilization data"})
	}
	ws = append(ws,
		Warning{Code: "no-commitment-rate", Message: "aws af-south-1 inf1: no 1y rate for inf1.xlarge"},
		stale("commitment", "Compute Savings Plan 1y no-upfront rate $0.28609/h (AWS RIs via ec2instances.info (tsaol/aws-gpu @2d0108c), as of 2025-11-30)", 2),
		Warning{Code: "no-commitment-rate", Message: "aws ap-east-1 g5: no 1y rate for g5.12xlarge"},
		stale("commitment", "Compute Savings Plan 1y no-upfront rate $0.381/h (AWS RIs via ec2instances.info (tsaol/aws-gpu @2d0108c), as of 2025-11-30)", 1),
		stale("spot", "GCP Billing Catalog (Cyclenerd @fd66b26)", 1),
		Warning{ResourceID: "gpu-1", Code: "low-coverage", Message: "utilization covers\n50 %"},
	)
	groups := groupWarnings(ws)
	n := 0
	var got []string
	for _, g := range groups {
		n += g.n
		got = append(got, g.lines(false)...)
	}
	if n != len(ws) {
		t.Errorf("groups count %d warnings of %d", n, len(ws))
	}
	want := []string{
		"no-utilization ×5 (e.g. i-00, i-01, i-02, …): no GPU utilization data",
		"aws af-south-1 inf1: no 1y rate for inf1.xlarge [no-commitment-rate]",
		"aws ap-east-1 g5: no 1y rate for g5.12xlarge [no-commitment-rate]",
		"commitment prices from Compute Savings Plan 1y no-upfront rates (AWS RIs via ec2instances.info (tsaol/aws-gpu @2d0108c)): 371 days old (as of 2025-11-30, limit 365), 3 instances at 2 rates; check current prices before acting [stale-price]",
		"spot prices from GCP Billing Catalog (Cyclenerd @fd66b26): 371 days old (as of 2025-11-30, limit 365), 1 instance; check current prices before acting [stale-price]",
		"gpu-1: utilization covers 50 % [low-coverage]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if h := warningsHeading(ws, groups); h != "Warnings (11, grouped; each one in -o json)" {
		t.Errorf("heading %q", h)
	}
	if h := warningsHeading(ws[5:6], groupWarnings(ws[5:6])); h != "Warnings (1)" {
		t.Errorf("heading of one %q", h)
	}
	// The terminal prints the lines; markdown the same groups.
	out := write(t, &Report{Warnings: ws, Recommendations: []Recommendation{}}, "markdown", PrintOptions{MarkdownSummary: true})
	for _, want := range []string{"- `no-utilization` × 5, e.g. `i-00`, `i-01`, `i-02`, …: no GPU utilization data", "(`stale-price` × 2)", "- `gpu-1`: utilization covers 50 % (`low-coverage`)"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

// The stale-price message read back is the one stalePriceWarnings writes.
func TestParseStaleMatchesWriter(t *testing.T) {
	found := 0
	for _, w := range generatedReport(t, 300).Warnings {
		if w.Code != WarnStalePrice {
			continue
		}
		found++
		if _, ok := parseStale(w.Message); !ok {
			t.Errorf("not read back: %q", w.Message)
		}
	}
	if found == 0 {
		t.Fatal("no stale price in the generated fleet")
	}
}

// Stale prices group by the warning's stalePrice, not by its wording: every
// stale-price warning of a generated fleet carries one that says what its
// message says; reworded messages group the same; a report written before
// 1.7 (no stalePrice, no instanceCount), read back from JSON, groups the
// same from its messages.
func TestGroupStalePricesByData(t *testing.T) {
	r := generatedReport(t, 300)
	var stale []Warning
	for _, w := range r.Warnings {
		if w.Code == WarnStalePrice {
			stale = append(stale, w)
		}
	}
	if len(stale) < 2 {
		t.Fatalf("%d stale-price warnings in the generated fleet, want several", len(stale))
	}
	lines := func(ws []Warning) string {
		var out []string
		for _, g := range groupWarnings(ws) {
			out = append(out, g.lines(false)...)
		}
		return strings.Join(out, "\n")
	}
	for _, w := range stale {
		if w.StalePrice == nil || w.InstanceCount == 0 {
			t.Fatalf("no stalePrice or instanceCount: %+v", w)
		}
		got, _ := staleOf(w)
		want, ok := parseStale(w.Message)
		if !ok || got != want {
			t.Errorf("stalePrice says %+v, the message %+v", got, want)
		}
	}
	want := lines(stale)
	if !strings.Contains(want, "[stale-price]") {
		t.Fatalf("not grouped as stale prices:\n%s", want)
	}

	reworded := slices.Clone(stale)
	for i := range reworded {
		reworded[i].Message = "old prices"
	}
	if got := lines(reworded); got != want {
		t.Errorf("reworded messages group otherwise:\n%s\nwant\n%s", got, want)
	}

	old := &Report{SchemaVersion: "1.6", Recommendations: []Recommendation{}, Warnings: slices.Clone(stale)}
	for i := range old.Warnings {
		old.Warnings[i].StalePrice, old.Warnings[i].InstanceCount = nil, 0
	}
	data, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("stalePrice")) {
		t.Fatal("the old report has a stalePrice")
	}
	loaded, err := Load(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got := lines(loaded.Warnings); got != want {
		t.Errorf("a 1.6 report's warnings group otherwise:\n%s\nwant\n%s", got, want)
	}
}
