package report

import (
	"io"
	"slices"
	"testing"
)

// BenchmarkWriteJSONItems writes the recommendations and instances of a
// generated 2,000-instance fleet's report.
func BenchmarkWriteJSONItems(b *testing.B) {
	full := generatedReport(b, 2000)
	r := &Report{Recommendations: full.Recommendations, Instances: full.Instances}
	b.ReportAllocs()
	for b.Loop() {
		if err := writeJSON(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteConsumed writes a generated 2,000-instance fleet's plan
// with WriteConsumed; each round consumes a shallow copy of the plan.
func BenchmarkWriteConsumed(b *testing.B) {
	plan, meta := generatedPlan(b, 2000)
	b.ReportAllocs()
	for b.Loop() {
		p := plan
		p.Recommendations = slices.Clone(plan.Recommendations)
		p.Instances = slices.Clone(plan.Instances)
		if err := WriteConsumed(io.Discard, &p, meta); err != nil {
			b.Fatal(err)
		}
	}
}
