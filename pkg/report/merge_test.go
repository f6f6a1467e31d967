package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func loadTestReport(t testing.TB) *Report {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Load(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// split cuts r into n partial reports by instance, each recommendation with
// its instance, as analyze --shard would.
func split(r *Report, n int, seed uint64) []Part {
	rng := rand.New(rand.NewPCG(seed, 1))
	parts := make([]Part, n)
	owner := map[string]int{}
	for i := range parts {
		p := *r
		p.Shard = &Shard{Index: i + 1, Count: n}
		p.Instances, p.Recommendations, p.Allocation = nil, nil, nil
		p.Sharing, p.Commitments, p.AIMetrics, p.TagAudit = nil, nil, nil, nil
		parts[i] = Part{Name: "part" + string(rune('a'+i)) + ".json", Report: &p}
	}
	for _, in := range r.Instances {
		k := rng.IntN(n)
		owner[in.ResourceID] = k
		parts[k].Report.Instances = append(parts[k].Report.Instances, in)
	}
	for _, rec := range r.Recommendations {
		k := owner[rec.ResourceID]
		parts[k].Report.Recommendations = append(parts[k].Report.Recommendations, rec)
	}
	for _, p := range parts {
		p.Report.Summary = sumSummary(p.Report)
	}
	return parts
}

// TestMergeEqualsWhole: whatever way a report's instances are cut into
// shards, the merge has the whole report's summary, recommendations and
// instances, and verifies.
func TestMergeEqualsWhole(t *testing.T) {
	whole := loadTestReport(t)
	for seed := range uint64(20) {
		n := 1 + int(seed%5)
		parts := split(whole, n, seed)
		rand.New(rand.NewPCG(seed, 2)).Shuffle(n, func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		m, err := Merge(parts)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := m.Verify(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if m.Shard != nil {
			t.Fatalf("seed %d: the merge is still partial", seed)
		}
		got, want := m.Summary, whole.Summary
		if !got.CurrentMonthlyCost.d.Equal(want.CurrentMonthlyCost.d) || !got.MonthlySavings.d.Equal(want.MonthlySavings.d) ||
			got.InstanceCount != want.InstanceCount || got.UnpricedCount != want.UnpricedCount || got.GPUCount != want.GPUCount ||
			!got.SavingsPercent.d.Equal(want.SavingsPercent.d) {
			t.Fatalf("seed %d: summary %+v, want %+v", seed, got, want)
		}
		ids := func(r *Report) []string {
			var out []string
			for _, rec := range r.Recommendations {
				out = append(out, rec.ID)
			}
			slices.Sort(out)
			return out
		}
		if !slices.Equal(ids(m), ids(whole)) || len(m.Instances) != len(whole.Instances) {
			t.Fatalf("seed %d: recommendations or instances differ", seed)
		}
	}
}

// TestMergeRefuses: each bad set of parts is an error naming the file.
func TestMergeRefuses(t *testing.T) {
	whole := loadTestReport(t)
	for _, tc := range []struct {
		name string
		edit func([]Part) []Part
		want string
	}{
		{"none", func([]Part) []Part { return nil }, "no reports"},
		{"not partial", func(p []Part) []Part { p[1].Report.Shard = nil; return p }, "partb.json: not a partial report"},
		{"missing", func(p []Part) []Part { return p[:2] }, "missing shard 3/3"},
		{"twice", func(p []Part) []Part { p[2].Report.Shard = &Shard{1, 3}; return p }, "partc.json: shard 1/3 is also in parta.json"},
		{"count", func(p []Part) []Part { p[2].Report.Shard = &Shard{3, 4}; return p }, "partc.json: shard 3/4 is of 4 shards"},
		{"major", func(p []Part) []Part { p[1].Report.SchemaVersion = "2.0"; return p }, "partb.json: schema 2.0"},
		{"policy", func(p []Part) []Part { p[1].Report.Policy.Idle.GPUPercent++; return p }, "partb.json: policy differs"},
		{"catalog", func(p []Part) []Part {
			p[1].Report.Catalog = slices.Clone(p[1].Report.Catalog)
			p[1].Report.Catalog[0].AsOf = "1999-01-01"
			return p
		}, "partb.json: price catalog"},
		{"overlap", func(p []Part) []Part {
			// A part that adds up, with an instance and its
			// recommendations of another part too.
			in := p[0].Report.Instances[0]
			p[1].Report.Instances = append(slices.Clone(p[1].Report.Instances), in)
			p[1].Report.Recommendations = slices.Clone(p[1].Report.Recommendations)
			for _, rec := range p[0].Report.Recommendations {
				if rec.ResourceID == in.ResourceID {
					p[1].Report.Recommendations = append(p[1].Report.Recommendations, rec)
				}
			}
			p[1].Report.Summary = sumSummary(p[1].Report)
			return p
		}, "partb.json: instance"},
		{"does not add up", func(p []Part) []Part {
			p[1].Report.Summary.MonthlySavings = addMoney(p[1].Report.Summary.MonthlySavings, NewMoney(decimal.NewFromInt(1)))
			return p
		}, "partb.json: report does not add up: summary.monthlySavings"},
		{"cut", func(p []Part) []Part { p[2].Report.Instances = p[2].Report.Instances[1:]; return p }, "partc.json: report does not add up"},
		{"index 0", func(p []Part) []Part { p[0].Report.Shard = &Shard{0, 3}; return p }, "parta.json: shard 0/3 is not a shard"},
		{"index past count", func(p []Part) []Part { p[0].Report.Shard = &Shard{4, 3}; return p }, "parta.json: shard 4/3 is not a shard"},
		{"count 0", func(p []Part) []Part {
			for i := range p {
				p[i].Report.Shard = &Shard{i, 0}
			}
			return p
		}, "parta.json: shard 0/0 is not a shard"},
	} {
		parts := split(whole, 3, 7)
		for i := range parts {
			c := *parts[i].Report
			parts[i].Report = &c
		}
		_, err := Merge(tc.edit(parts))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// FuzzMerge: two documents read as reports never panic the reader or the
// merge; every error is one line; a merge that succeeds verifies, and so
// does each part it took.
func FuzzMerge(f *testing.F) {
	r := loadTestReport(f)
	whole, err := json.Marshal(r)
	if err != nil {
		f.Fatal(err)
	}
	parts := split(r, 2, 3)
	var docs [][]byte
	for _, p := range parts {
		b, err := json.Marshal(p.Report)
		if err != nil {
			f.Fatal(err)
		}
		docs = append(docs, b)
	}
	f.Add(docs[0], docs[1])
	f.Add(docs[1], docs[0])
	f.Add(docs[0], docs[0])
	f.Add(whole, docs[1])
	f.Add([]byte(`{"schemaVersion":"1.6","shard":{"index":1,"count":2}}`), []byte(`{"schemaVersion":"1.6","shard":{"index":2,"count":2}}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var parts []Part
		for i, doc := range [][]byte{a, b} {
			r, err := Load(bytes.NewReader(doc))
			if err != nil {
				if strings.ContainsAny(err.Error(), "\n\r") {
					t.Fatalf("error on several lines: %q", err)
				}
				return
			}
			parts = append(parts, Part{Name: []string{"a.json", "b.json"}[i], Report: r})
		}
		m, err := Merge(parts)
		if err != nil {
			var me *MergeError
			if !errors.As(err, &me) {
				t.Fatalf("error %v is not a *MergeError", err)
			}
			return
		}
		for _, p := range parts {
			if err := p.Report.Verify(); err != nil {
				t.Fatalf("merged %s, which does not verify: %v", p.Name, err)
			}
		}
		if err := m.Verify(); err != nil {
			t.Fatalf("the merge does not verify: %v", err)
		}
	})
}
